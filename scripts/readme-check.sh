#!/usr/bin/env bash
# Runs README.md's commands as a new user pastes them: every block fenced ```sh (and
# ```sh slow), in order, in one bash session, in a fresh copy of the repository (the files
# git tracks, as they are in the work tree: `git add` a new file to include it; no target/),
# with HOME and the cargo install root in a temporary directory.
# Blocks fenced ```console are shown, never run (GPU, Docker, Nextflow, clusters, your data).
#
#   bash scripts/readme-check.sh            everything: builds and installs swarrow, runs the
#                                           test suite (about 30 minutes on 2 cores)
#   SWARROW=path bash scripts/readme-check.sh --quick
#                                           skips the ```sh slow blocks (build, install, test
#                                           suite); the binary at `path` is the installed
#                                           swarrow (what `cargo test` runs, tests/readme.rs)
#
# Exit status: 0 all ran; 1 a command failed (its block is printed); 77 a tool the README
# assumes is missing here (python3 with venv), so the check cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
quick=0
[ "${1:-}" = "--quick" ] && quick=1

if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "readme-check: python3 with venv and ensurepip is needed (Debian: apt install python3-venv)" >&2
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy=$work/swarrow
mkdir -p "$copy" "$work/home" "$work/install/bin"
# Outside a git checkout (the test suite run by this check, in its copy): every file but
# build outputs and environments.
list_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached
  else
    find . \( -path ./target -o -path ./.venv -o -path ./.git -o -path ./.snakemake \) -prune -o -type f -printf '%P\0'
  fi
}
list_files | while IFS= read -r -d '' f; do
  [ -e "$f" ] || continue # deleted in the work tree, not yet committed
  mkdir -p "$copy/$(dirname "$f")"
  cp -p "$f" "$copy/$f"
done

if [ $quick = 1 ]; then
  : "${SWARROW:?--quick needs SWARROW=path/to/swarrow}"
  ln -s "$(realpath "$SWARROW")" "$work/install/bin/swarrow"
fi

# The blocks, in order, as one script; each block announces itself so a failure names it.
script=$work/readme.sh
awk -v quick=$quick '
  /^```/ && !inblock {
    info = substr($0, 4)
    run = (info == "sh" || (info == "sh slow" && !quick))
    inblock = 1; n++
    if (run) printf "echo \"== README block %d (line %d)\" >&2\n", n, NR
    next
  }
  /^```/ && inblock { inblock = 0; next }
  inblock && run { print }
' README.md > "$script"

# The user's toolchain and caches, but a home and an install root of their own: the check
# writes nothing outside its temporary directory.
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pip}
export CARGO_INSTALL_ROOT=$work/install
export PATH=$work/install/bin:$CARGO_HOME/bin:$PATH
export HOME=$work/home
unset SWARROW CARGO_TARGET_DIR VIRTUAL_ENV
cd "$copy"
if bash -e -o pipefail "$script"; then
  echo "readme-check: every README command ran ($( [ $quick = 1 ] && echo "quick: sh slow blocks skipped" || echo "all blocks"))"
else
  status=$?
  echo "readme-check: a README command failed (exit $status); the script was:" >&2
  cat -n "$script" >&2
  exit 1
fi
# What the commands wrote must be ignored by the repository's .gitignore: pasting them leaves
# no untracked files in a checkout. (Files the copy was made of keep their old times.)
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  untracked=$(find . -type f -newer "$script" -printf '%P\n' |
    git -C "$root" check-ignore --no-index --stdin --verbose --non-matching | awk -F'\t' '$1 == "::" { print $2 }')
  if [ -n "$untracked" ]; then
    echo "readme-check: the README's commands leave files that .gitignore does not cover:" >&2
    echo "$untracked" >&2
    exit 1
  fi
fi
