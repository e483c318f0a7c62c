# bench/'s folders include only from their own layer and the layers below
# (bench/README.md, "Layout"): main.c on top; the commands (run: both sweeps),
# experiments, report and ring side by side; then pipeline (what the sweep
# commands share), output, peers, measure, machine, cli and util at the
# bottom. Run from anywhere: sh layers.sh [BENCH_DIR].
bench="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
rank() {
  case "$1" in
    run|experiments|report|ring|targets) echo 8 ;;
    pipeline) echo 7 ;; output) echo 6 ;; peers) echo 5 ;; measure) echo 4 ;; machine) echo 3 ;;
    cli) echo 2 ;; util) echo 1 ;; *) echo 0 ;;
  esac
}
bad=0
for part in run experiments report ring targets pipeline output peers measure machine cli util; do
  for file in "$bench/$part"/*.[ch]; do
    for used in $(sed -n 's|^#include "\([a-z_]*\)/.*|\1|p' "$file" | sort -u); do
      [ "$used" = "$part" ] && continue
      if [ "$(rank "$used")" -eq 0 ] || [ "$(rank "$used")" -ge "$(rank "$part")" ]; then
        echo "layers: $part/$(basename "$file") includes from $used/ (not a lower layer)" >&2
        bad=1
      fi
    done
  done
done
[ "$bad" -eq 0 ] && echo "layers: every folder includes only from lower layers"
exit "$bad"
