#!/bin/sh
# An agent that answers initialize and session/new, then closes its
# standard input while keeping standard output open: writes to it fail and
# no end of stream follows.
read -r line
echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"closes-stdin","version":"1"}}}'
read -r line
echo '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1"}}'
exec 0<&-
exec sleep 60
