// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/fixtures/generate"
	"github.com/mcs-gitops/mcs-gitops/test/gitea"
)

// git runs git in dir with a fixed identity.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// demoFiles are the demo ClusterSet's config and inputs, as a repository's
// root holds them.
func demoFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, p := range []string{"clusterset.yaml", "inputs/cluster-1.yaml", "inputs/cluster-2.yaml", "inputs/cluster-3.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../fixtures/demo", p))
		require.NoError(t, err)
		files[p] = string(b)
	}
	return files
}

// unexportPostgres is the demo's cluster-3 snapshot without its export of
// db/postgres: a change that withdraws a service from every member.
func unexportPostgres(t *testing.T, snap string) string {
	t.Helper()
	export := "---\napiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata:\n  name: postgres\n  namespace: db\n  creationTimestamp: \"2026-11-03T08:00:00Z\"\n"
	require.Contains(t, snap, export)
	return strings.Replace(snap, export, "", 1)
}

// TestGitHubAction runs the Action's step (action.yml runs
// ci/github/review.sh) as a runner would, on a pull request of a real
// repository on Gitea, which serves the comments API GitHub does: the job
// summary, annotations on the snapshot lines, a failure for a withdrawal,
// and one comment that the next push's run updates rather than repeats.
func TestGitHubAction(t *testing.T) {
	var action struct {
		Runs struct {
			Using string `json:"using"`
			Steps []struct {
				Run string            `json:"run"`
				Env map[string]string `json:"env"`
			} `json:"steps"`
		} `json:"runs"`
	}
	data, err := os.ReadFile("../../action.yml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &action))
	require.Equal(t, "composite", action.Runs.Using)
	require.Len(t, action.Runs.Steps, 1)
	require.Equal(t, `"$GITHUB_ACTION_PATH/ci/github/review.sh"`, action.Runs.Steps[0].Run)

	bin := buildBinary(t)
	srv := gitea.Start(t)
	clone := srv.CreateRepo(t, "fleet")
	files := demoFiles(t)
	gitea.Push(t, clone, srv.Token, "main", "main", files)
	pr := map[string]string{"inputs/cluster-3.yaml": unexportPostgres(t, files["inputs/cluster-3.yaml"])}
	gitea.Push(t, clone, srv.Token, "main", "unexport-postgres", pr)
	number := srv.OpenPull(t, "fleet", "unexport-postgres", "main", "unexport postgres")
	checkout := checkoutBranch(t, clone, "unexport-postgres")
	runner := t.TempDir()
	summary := filepath.Join(runner, "summary.md")
	step := func() (string, int) {
		return actionStep(t, bin, srv, checkout, runner, number, "withdrawal,new-conflict,invalid")
	}
	out, rc := step()
	assert.Equal(t, 1, rc, "a withdrawal fails the job:\n%s", out)
	assert.Contains(t, out, "withdrawal: db/postgres: no longer imported by cluster-1, cluster-2, cluster-3")
	assert.Contains(t, out, "::error title=mcs-gitops%3A withdrawal::db/postgres: no longer imported by")
	assert.Contains(t, out, "posted comment")
	assert.NotContains(t, out, srv.Token, "the token is never printed")
	md, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(md), "## mcs-gitops: remove db/postgres from cluster-1, cluster-2, cluster-3")

	comments := func() []string { return prComments(t, srv, number) }
	got := comments()
	require.Len(t, got, 1)
	assert.True(t, strings.HasPrefix(got[0], "<!-- mcs-gitops review -->\n## mcs-gitops: remove db/postgres"), got[0])

	// The author pushes again (postgres exported back, httpbin's port
	// changed): the same comment now says that; the job passes.
	files["inputs/cluster-1.yaml"] = strings.Replace(files["inputs/cluster-1.yaml"], "port: 8000", "port: 8001", 1)
	files["inputs/cluster-3.yaml"] = strings.Replace(files["inputs/cluster-3.yaml"], "port: 8000", "port: 8001", 1)
	gitea.Push(t, clone, srv.Token, "main", "unexport-postgres", map[string]string{
		"inputs/cluster-1.yaml": files["inputs/cluster-1.yaml"], "inputs/cluster-3.yaml": files["inputs/cluster-3.yaml"]})
	gitIn(t, checkout, "fetch", "-q", "origin", "+unexport-postgres:refs/remotes/origin/unexport-postgres")
	gitIn(t, checkout, "reset", "-q", "--hard", "origin/unexport-postgres")
	out, rc = step()
	assert.Equal(t, 0, rc, "a port change is none of the kinds that fail:\n%s", out)
	assert.Contains(t, out, "updated comment")
	got = comments()
	require.Len(t, got, 1, "one comment, updated")
	assert.Contains(t, got[0], "change httpbin/httpbin: port http 8000/TCP -&gt; 8001/TCP")
}

// checkoutBranch is a clone of cloneURL with branch checked out, as a
// runner's checkout of a pull request.
func checkoutBranch(t *testing.T, cloneURL, branch string) string {
	t.Helper()
	dir := t.TempDir()
	gitIn(t, dir, "clone", "-q", cloneURL, ".")
	gitIn(t, dir, "checkout", "-q", branch)
	return dir
}

// actionStep runs the Action's step in checkout as a runner would for
// pull request number, with runner as RUNNER_TEMP (the job summary is
// runner/summary.md); it returns the step's output and exit code.
func actionStep(t *testing.T, bin string, srv *gitea.Server, checkout, runner string, number int, failOn string) (string, int) {
	t.Helper()
	event := filepath.Join(runner, "event.json")
	require.NoError(t, os.WriteFile(event, []byte(fmt.Sprintf(`{"pull_request": {"number": %d}}`, number)), 0o644))
	cmd := exec.Command("bash", mustAbs(t, "../../ci/github/review.sh"))
	cmd.Dir = checkout
	cmd.Env = append(os.Environ(),
		"MCS_GITOPS="+bin, "MCS_CONFIG=clusterset.yaml", "MCS_FAIL_ON="+failOn, "MCS_COMMENT=true",
		"GITHUB_ACTION_PATH="+mustAbs(t, "../.."), "GITHUB_BASE_REF=main", "GITHUB_STEP_SUMMARY="+filepath.Join(runner, "summary.md"), "RUNNER_TEMP="+runner,
		"GITHUB_API_URL="+srv.URL+"api/v1", "GITHUB_REPOSITORY="+gitea.AdminName+"/fleet", "GITHUB_TOKEN="+srv.Token, "GITHUB_EVENT_PATH="+event)
	out, err := cmd.CombinedOutput()
	rc := 0
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return string(out), rc
}

// prComments are the bodies of pull request number's comments.
func prComments(t *testing.T, srv *gitea.Server, number int) []string {
	t.Helper()
	var cs []struct {
		Body string `json:"body"`
	}
	code, body := srv.API(t, srv.Token, http.MethodGet, fmt.Sprintf("repos/%s/fleet/issues/%d/comments", gitea.AdminName, number), nil, &cs)
	require.Equal(t, http.StatusOK, code, "%s", body)
	var out []string
	for _, c := range cs {
		out = append(out, c.Body)
	}
	return out
}

// A pull request that changes 2,500 services across 20 members (every
// service renamed: 2,500 withdrawn and 2,500 new, each from 2 of the 20)
// still gets a job summary under GitHub's 1 MiB and one comment under
// its 65,536 characters, each saying what it left out; the job fails on
// the withdrawals. Unbounded, such a summary was about 2.5 MB.
func TestGitHubActionLargeChange(t *testing.T) {
	bin := buildBinary(t)
	srv := gitea.Start(t)
	clone := srv.CreateRepo(t, "fleet")
	world := func(seed uint64) map[string]string {
		dir := t.TempDir()
		cfg, snaps := generate.ClusterSet(generate.Params{Members: 20, Services: 2500, ExportersPerService: 2, EndpointsPerExporter: 1, Seed: seed})
		require.NoError(t, generate.WriteInputs(dir, cfg, snaps))
		files := map[string]string{}
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			files[filepath.ToSlash(rel)] = string(b)
			return err
		}))
		return files
	}
	gitea.Push(t, clone, srv.Token, "main", "main", world(1))
	gitea.Push(t, clone, srv.Token, "main", "rename-everything", world(2))
	number := srv.OpenPull(t, "fleet", "rename-everything", "main", "rename everything")
	checkout := checkoutBranch(t, clone, "rename-everything")
	runner := t.TempDir()

	out, rc := actionStep(t, bin, srv, checkout, runner, number, "withdrawal")
	assert.Equal(t, 1, rc, "2,500 withdrawals fail the job")
	assert.Contains(t, out, "posted comment")
	md, err := os.ReadFile(filepath.Join(runner, "summary.md"))
	require.NoError(t, err)
	assert.Less(t, len(md), 1<<20, "the job summary fits GitHub's 1 MiB")
	assert.Contains(t, string(md), "more")
	got := prComments(t, srv, number)
	require.Len(t, got, 1)
	assert.LessOrEqual(t, utf8.RuneCountInString(got[0]), 65536, "the comment fits GitHub's 65,536 characters")
	assert.Contains(t, got[0], "| cluster-20 |", "every member's row is there")
	assert.Contains(t, got[0], "more", "and it says what it left out")
	assert.Regexp(t, `\*\*In all:\*\* \d+ services reachable from more members \(\d+ member-service pairs\); \d+ services reachable from fewer members`, got[0], "it opens with the totals")
	t.Logf("summary %d bytes, comment %d characters", len(md), utf8.RuneCountInString(got[0]))
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	require.NoError(t, err)
	return a
}

// TestGitLabTemplate runs the script of ci/gitlab/mcs-gitops.yml's hidden
// job as a GitLab runner would (each line must succeed), in a merge
// request's checkout whose origin is a bare repository: the JUnit report
// and the summary are written, a withdrawal fails the job, a port change
// does not.
func TestGitLabTemplate(t *testing.T) {
	var tmpl map[string]struct {
		Variables map[string]string `json:"variables"`
		Script    []string          `json:"script"`
	}
	data, err := os.ReadFile("../../ci/gitlab/mcs-gitops.yml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &tmpl))
	job, ok := tmpl[".mcs-gitops-review"]
	require.True(t, ok, "the hidden job users extend")
	require.NotEmpty(t, job.Script)

	bin := buildBinary(t)
	origin := t.TempDir()
	gitIn(t, origin, "init", "-q", "--bare", "-b", "main")
	work := t.TempDir()
	gitIn(t, work, "init", "-q", "-b", "main")
	files := demoFiles(t)
	for p, c := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(work, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(work, p), []byte(c), 0o644))
	}
	gitIn(t, work, "add", "-A")
	gitIn(t, work, "commit", "-q", "-m", "base")
	gitIn(t, work, "remote", "add", "origin", origin)
	gitIn(t, work, "push", "-q", "origin", "main")

	run := func(branch string, edit func()) (string, error) {
		gitIn(t, work, "checkout", "-q", "-B", branch, "origin/main")
		edit()
		gitIn(t, work, "commit", "-q", "-am", branch)
		script := "set -e\n"
		for k, v := range job.Variables {
			script += fmt.Sprintf("%s=%q\n", k, v)
		}
		script += strings.Join(job.Script, "\n") + "\n"
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main", "CI_PIPELINE_SOURCE=merge_request_event")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	replaceIn := func(p, old, new string) func() {
		return func() {
			b, err := os.ReadFile(filepath.Join(work, p))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(work, p), []byte(strings.Replace(string(b), old, new, 1)), 0o644))
		}
	}
	out, err := run("port", func() {
		replaceIn("inputs/cluster-1.yaml", "port: 8000", "port: 8001")()
		replaceIn("inputs/cluster-3.yaml", "port: 8000", "port: 8001")()
	})
	require.NoError(t, err, "a port change passes:\n%s", out)
	report, err := os.ReadFile(filepath.Join(work, "mcs-gitops.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(report), `<testsuites name="mcs-gitops" tests="2" failures="0">`)
	md, err := os.ReadFile(filepath.Join(work, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "httpbin/httpbin")

	out, err = run("withdraw", func() {
		p := filepath.Join(work, "inputs/cluster-3.yaml")
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, []byte(unexportPostgres(t, string(b))), 0o644))
	})
	require.Error(t, err, "a withdrawal fails the job:\n%s", out)
	report, err = os.ReadFile(filepath.Join(work, "mcs-gitops.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(report), `failures="1"`)
	assert.Contains(t, string(report), "withdrawal: db/postgres: no longer imported by cluster-1, cluster-2, cluster-3")
}
