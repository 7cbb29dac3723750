# CI step for tests/vscode (sourced by .ci/run, so: no `exit`, no stray variables; idempotent).
# Installs what the VS Code extension's tests need and builds the .vsix:
#   - the extension's npm dependencies (npm ci) and the .vsix (vsce, works offline on Node 20);
#   - Debian's chromium (playwright's own browser download does not work here) and libkrb5-dev, which
#     code-server's native modules need to build;
#   - Node 24 from the npm package node@24 (code-server 4.139 refuses other Node majors) and code-server.
# Tools go to $REUSELENS_VSCODE_TOOLS (default ~/.cache/reuselens/vscode-e2e); tests/vscode finds them there.

reuselens_vscode_ci_step() {
  local repo tools code_server_version
  repo="$(pwd)"
  tools="${REUSELENS_VSCODE_TOOLS:-$HOME/.cache/reuselens/vscode-e2e}"
  code_server_version="4.139.1"

  local sudo_cmd=""
  if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then sudo_cmd="sudo"; fi
  local missing=()
  command -v node >/dev/null 2>&1 || missing+=(nodejs npm)
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
  command -v g++ >/dev/null 2>&1 || missing+=(build-essential)
  command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
  dpkg -s libx11-dev libxkbfile-dev libsecret-1-dev >/dev/null 2>&1 || missing+=(libx11-dev libxkbfile-dev libsecret-1-dev)
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "vscode step: apt-get install ${missing[*]}"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi

  if [ ! -x "$tools/node24/node_modules/node/bin/node" ]; then
    echo "vscode step: Node 24 from npm (node@24)"
    mkdir -p "$tools/node24"
    (cd "$tools/node24" && { [ -f package.json ] || npm init -y >/dev/null; } &&
      npm install --no-audit --no-fund --loglevel=error node@24)
  fi
  # vsce 3 and the tests need Node >= 20; Debian's own nodejs is 18, so use Node 24 when the system's is older.
  if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
    export PATH="$tools/node24/node_modules/node/bin:$PATH"
  fi

  echo "vscode step: npm ci in vscode-extension (node $(node --version))"
  (cd "$repo/vscode-extension" && npm ci --no-audit --no-fund --loglevel=error && npm run --silent package >/dev/null)
  ls -l "$repo/vscode-extension/out/reuselens.vsix"
  if [ ! -x "$tools/code-server/node_modules/.bin/code-server" ]; then
    echo "vscode step: code-server $code_server_version from npm (builds native modules, a few minutes)"
    mkdir -p "$tools/code-server"
    (cd "$tools/code-server" && { [ -f package.json ] || npm init -y >/dev/null; } &&
      PATH="$tools/node24/node_modules/node/bin:$PATH" npm install --no-audit --no-fund --loglevel=error \
        --dangerously-allow-all-scripts "code-server@$code_server_version")
  fi
  export REUSELENS_VSCODE_TOOLS="$tools"
}
reuselens_vscode_ci_step
unset -f reuselens_vscode_ci_step
