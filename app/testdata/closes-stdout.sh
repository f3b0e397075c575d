#!/bin/sh
# An agent that closes its standard output before answering initialize and
# stays alive.
exec 1>&-
exec sleep 60
