# Sourced by the scripts that time nnbench's framework engines against
# the frameworks' own loops (worker_overhead.sh, tensorflow_xla.sh): the
# environments, a run's median step, and the environment nnbench gives
# its workers (the OpenMP OpenBLAS first on LD_LIBRARY_PATH), given to the
# plain loops too.
venvs=${NNBENCH_VENVS:-${XDG_DATA_HOME:-$HOME/.local/share}/nnbench/venvs}
median() { python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["results"][0]["stats_seconds"]["median"]*1e3))' "$1"; }
# The peers' name of a zoo model: mlp or resnet56.
peer_model() { if [ "$1" = resnet-56 ]; then echo resnet56; else echo mlp; fi; }
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
