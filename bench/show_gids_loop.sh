#!/bin/bash
# The GID table walk operators script today, after NVIDIA's show_gids
# (MLNX_OFED; rdma-core has no equivalent): for every device, port and GID
# slot, `cat` the GID, skip the zero and bare link-local prefix GIDs, then
# `cat` the slot's ndev and type, and print one line per entry.
#   show_gids_loop.sh ROOT [DEV...]   (ROOT = / or a host tree; DEVs as
#                                     show_gids takes them, default all)
# Same commands per slot as show_gids; only /sys is prefixed with ROOT.
SYS=${1%/}/sys
shift
DEVS="$*"
if [ -z "$DEVS" ]; then DEVS=$(ls $SYS/class/infiniband/); fi
gid_count=0
echo -e "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4 \t\tVER\tDEV"
for d in $DEVS; do
  for p in $(ls $SYS/class/infiniband/$d/ports/); do
    for g in $(ls $SYS/class/infiniband/$d/ports/$p/gids/); do
      gid=$(cat $SYS/class/infiniband/$d/ports/$p/gids/$g)
      if [ $gid = 0000:0000:0000:0000:0000:0000:0000:0000 ]; then continue; fi
      if [ $gid = fe80:0000:0000:0000:0000:0000:0000:0000 ]; then continue; fi
      _ndev=$(cat $SYS/class/infiniband/$d/ports/$p/gid_attrs/ndevs/$g 2>/dev/null)
      __type=$(cat $SYS/class/infiniband/$d/ports/$p/gid_attrs/types/$g 2>/dev/null)
      _type=$(echo $__type | grep -o "[Vv].*")
      if [ $(echo $gid | cut -d ":" -f -1) = "0000" ]; then
        ipv4=$(printf "%d.%d.%d.%d" 0x${gid:30:2} 0x${gid:32:2} 0x${gid:35:2} 0x${gid:37:2})
        echo -e "$d\t$p\t$g\t$gid\t$ipv4 \t$_type\t$_ndev"
      else
        echo -e "$d\t$p\t$g\t$gid\t\t\t$_type\t$_ndev"
      fi
      gid_count=$(expr 1 + $gid_count)
    done
  done
done
echo n_gids_found=$gid_count
