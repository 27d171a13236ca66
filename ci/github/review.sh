#!/usr/bin/env bash
# The GitHub Action's step (action.yml): diff --base with the job summary,
# annotations and the pull request comment; exits as diff does. Uses
# mcs-gitops from MCS_GITOPS or PATH, else builds it from the action's own
# source (run actions/setup-go first).
set -uo pipefail
bin=${MCS_GITOPS:-$(command -v mcs-gitops || true)}
if [ -z "$bin" ]; then
	echo "::group::building mcs-gitops from the action's source"
	(cd "$GITHUB_ACTION_PATH" && go build -trimpath -o "$RUNNER_TEMP/mcs-gitops" ./cmd/mcs-gitops) || exit 3
	bin=$RUNNER_TEMP/mcs-gitops
	echo "::endgroup::"
fi
base=${MCS_BASE:-}
if [ -z "$base" ]; then
	[ -n "${GITHUB_BASE_REF:-}" ] || { echo "::error title=mcs-gitops::not a pull request: set the action's base input"; exit 2; }
	base=origin/$GITHUB_BASE_REF
fi
comment=$RUNNER_TEMP/mcs-gitops-comment.md
args=(diff --config "${MCS_CONFIG:-clusterset.yaml}" --base "$base" --summary "$GITHUB_STEP_SUMMARY" --comment "$comment" -o github)
if [ -n "${MCS_FAIL_ON:-}" ]; then
	args+=(--fail-on "$MCS_FAIL_ON")
fi
"$bin" "${args[@]}"
rc=$?
if [ "${MCS_COMMENT:-true}" = true ] && [ -s "$comment" ]; then
	"$bin" comment --body-file "$comment" || echo "::warning title=mcs-gitops::could not post the pull request comment"
fi
exit "$rc"
