# lib/'s folders include only from their own layer and the layers below
# (lib/CMakeLists.txt, docs/architecture.md): ring on top, then api, plan,
# engine; kernels and blas side by side (neither includes the other); core
# at the bottom. Inside kernels/, an instruction set's folder includes from
# kernels/ and its own folder, never from another set's. Includes name their
# folder from lib/ ("core/check.h"). Run from anywhere:
# sh lib_layers.sh [LIB_DIR]; exits 1 and names each include that points up
# or sideways.
lib="${1:-$(cd "$(dirname "$0")/../lib" && pwd)}"
rank() {
  case "$1" in
    ring) echo 6 ;; api) echo 5 ;; plan) echo 4 ;; engine) echo 3 ;;
    kernels|blas) echo 2 ;; core) echo 1 ;; *) echo 0 ;;
  esac
}
bad=0
for part in ring api plan engine kernels blas core; do
  [ -d "$lib/$part" ] || { echo "lib_layers: no folder lib/$part" >&2; bad=1; continue; }
  for file in $(find "$lib/$part" -name '*.[ch]' | sort); do
    here="${file#"$lib"/}"
    isa=""
    case "$here" in kernels/*/*) isa="${here#kernels/}"; isa="${isa%%/*}" ;; esac
    for used in $(sed -n 's|^#include "\([^"]*\)".*|\1|p' "$file" | sort -u); do
      folder="${used%%/*}"
      if [ "$folder" = "$used" ]; then
        echo "lib_layers: $here includes \"$used\", which names no folder" >&2
        bad=1
      elif [ "$folder" = "kernels" ] && [ "$part" = "kernels" ]; then
        other="${used#kernels/}"
        case "$other" in
          */*) [ "${other%%/*}" = "$isa" ] || {
                 echo "lib_layers: $here includes $used (another instruction set's folder)" >&2
                 bad=1; } ;;
        esac
      elif [ "$folder" != "$part" ] &&
           { [ "$(rank "$folder")" -eq 0 ] || [ "$(rank "$folder")" -ge "$(rank "$part")" ]; }; then
        echo "lib_layers: $here includes $used (not a lower layer)" >&2
        bad=1
      fi
    done
  done
done
[ "$bad" -eq 0 ] && echo "lib_layers: every folder of lib/ includes only from lower layers"
exit "$bad"
