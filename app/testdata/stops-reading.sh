#!/bin/sh
# An agent that answers initialize and session/new, then never reads its
# standard input again (a prompt larger than the pipe buffer cannot be
# handed over).
read -r line
echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"stops-reading","version":"1"}}}'
read -r line
echo '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1"}}'
exec sleep 60
