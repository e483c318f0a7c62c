# The house rule (issue 24): no source file over 600 lines. Every file git
# tracks whose name ends in .c, .h, .py, .sh or .cmake, or is
# CMakeLists.txt, but those under bench/results/ (measurements and the
# scripts kept with them), as it is in the work tree. Run from anywhere:
# sh source_lengths.sh [ROOT [LIMIT]]; exits 1 and names each file over the
# limit (600 unless given) with its length. Outside a git checkout (a source
# tarball) every such file below ROOT but build/ counts.
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
limit="${2:-600}"
cd "$root" || exit 1
list() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -- '*.c' '*.h' '*.py' '*.sh' '*.cmake' 'CMakeLists.txt' '*/CMakeLists.txt'
  else
    find . -path ./build -prune -o -path ./.git -prune -o -type f \
      \( -name '*.[ch]' -o -name '*.py' -o -name '*.sh' -o -name '*.cmake' \
         -o -name CMakeLists.txt \) -print | sed 's|^\./||'
  fi
}
bad=0
checked=0
for file in $(list | grep -v '^bench/results/' | sort -u); do
  [ -f "$file" ] || continue # deleted in the work tree
  checked=$((checked + 1))
  lines=$(wc -l <"$file")
  if [ "$lines" -gt "$limit" ]; then
    echo "source_lengths: $file has $lines lines (at most $limit)" >&2
    bad=1
  fi
done
if [ "$checked" -eq 0 ]; then
  echo "source_lengths: no source files found below $root" >&2
  exit 1
fi
[ "$bad" -eq 0 ] && echo "source_lengths: $checked source files, none over $limit lines"
exit "$bad"
