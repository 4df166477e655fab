#!/bin/sh
# start-node.sh HOME INDEX PEERS [ARG...]: starts the CometBFT node whose home is HOME (node
# INDEX of the testnet) with the others as its persistent peers. PEERS is ${group.nodes.p2p}
# as tandem gives it to this node: every node's host:port in node order, the others' through
# the links between the nodes, so each peer is dialled through the link of its pair; each
# peer's ID is read from its home (a sibling of HOME named node<i>). The ARGs go to
# `cometbft start`.
set -eu
home=$1 index=$2 peers=$3
shift 3
dir=$(dirname "$home")
i=0
list=
for addr in $(echo "$peers" | tr ',' ' '); do
	if [ "$i" != "$index" ]; then
		id=$(cometbft show-node-id --home "$dir/node$i")
		list="${list:+$list,}$id@$addr"
	fi
	i=$((i + 1))
done
exec cometbft start --home "$home" --p2p.persistent_peers "$list" --p2p.pex=false "$@"
