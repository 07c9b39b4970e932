#!/bin/bash
# A stand-in for kubectl: appends "kubectl ARGS..." to $KUBECTL_LOG and succeeds.
# KUBECTL_FAIL_DRAIN=1 makes `drain` fail as kubectl does when an eviction times out.
echo "kubectl $*" >>"${KUBECTL_LOG:?}"
for a in "$@"; do
  if [[ $a == drain && -n ${KUBECTL_FAIL_DRAIN:-} ]]; then
    echo "error: unable to drain node \"$2\" due to error: global timeout reached: 90s" >&2
    exit 1
  fi
done
case " $* " in
  *" cordon "*) echo "node/${*: -1} cordoned" ;;
  *" uncordon "*) echo "node/${*: -1} uncordoned" ;;
  *" wait "*) echo "node/${*: -2:1} condition met" ;;
esac
exit 0
