// SPDX-License-Identifier: Apache-2.0

// Package arch checks the shape of the tree that docs/architecture.md
// describes: which folders hold packages, which package may import which,
// and that every Go file carries its licence. A change that breaks a rule
// here either moves the code or changes the rule and the document together.
package arch

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcs-gitops/mcs-gitops"

// roots are the folders a package may live under: the ones the project is
// specified with, deploy (its go:embed sits beside the manifests), and
// internal, test and build.
var roots = []string{"cmd", "render", "gitsync", "apply", "schemas", "fixtures", "clusters", "deploy", "internal", "test", "build"}

// rules says, per package (a path relative to the module, or a prefix
// ending in "/..."), which imports it must not have, directly or not.
// Prefixes match the same way; a rule on the module path alone does not
// exist.
var rules = []struct {
	pkg, mustNot, why string
}{
	{"render", "k8s.io/client-go/...", "render is pure: no clients"},
	{"render", module + "/clusters", "render sees snapshots, not clusters"},
	{"render", module + "/gitsync", "render knows no Git"},
	{"render", module + "/internal/layout", "render knows no path"},
	{"clusters/snapshot", module + "/clusters", "the snapshot type does not talk to members"},
	{"clusters/snapshot", "k8s.io/client-go/...", "the snapshot type does not talk to members"},
	{"gitsync", module + "/render", "gitsync knows no file format"},
	{"gitsync", module + "/internal/layout", "gitsync knows no path"},
	{"gitsync", module + "/clusters", "gitsync talks to Git only"},
	{"internal/layout", module + "/clusters", "layout needs the snapshot type only"},
	{"internal/layout", module + "/gitsync", "layout does no Git"},
	{"internal/layout", "k8s.io/client-go/...", "layout talks to no cluster"},
	{"internal/yamlfast", module + "/...", "the YAML writer knows nothing of what it writes"},
	{"internal/redact", module + "/...", "redaction depends on nothing"},
	{"internal/contract", module + "/apply", "the contract is checked by apply, not the other way"},
	{"internal/contract", "k8s.io/client-go/...", "the contract does no I/O"},
	{"internal/review", module + "/gitsync", "the split is pure"},
	{"internal/review", module + "/internal/review/forge", "the split is pure"},
	{"internal/review", "k8s.io/client-go/...", "the split is pure"},
	{"internal/review/propose", module + "/gitsync", "proposals' text and record do no Git"},
	{"internal/review/propose", "k8s.io/client-go/...", "proposals' text and record talk to no cluster"},
	{"internal/review/forge", module + "/gitsync", "the forge client does no Git"},
	{"apply", module + "/gitsync", "apply is given files, it does not read Git"},
	{"apply", module + "/clusters", "apply is given clients"},
	{"apply", module + "/internal/reconcile", "the loop calls apply"},
	{"clusters", module + "/render", "clusters reads members, it does not render"},
	{"clusters", module + "/gitsync", "clusters reads members, it writes no Git"},
	{"clusters", module + "/apply", "clusters reads members, it applies nothing"},
	{"internal/member/...", module + "/internal/reconcile", "join and doctor do not run the loop"},
	{"internal/fleetstatus", module + "/apply", "status writes nothing"},
	{"internal/lineage", module + "/gitsync", "the record holds commits as text; it does no Git"},
	{"internal/lineage", module + "/internal/reconcile", "the loop decides what the record means"},
	{"internal/rerender", module + "/gitsync", "a commit's files come in as a map; rerender does no Git"},
	{"internal/rerender", "k8s.io/client-go/...", "rerender talks to no cluster"},
	{"internal/rollout", module + "/gitsync", "the plan commits nothing"},
	{"internal/rollout", "k8s.io/client-go/...", "the plan reads no member"},
	{"internal/inventory", module + "/internal/reconcile", "the inventory gives members; it does not run the loop"},
	{"internal/inventory", module + "/clusters", "the inventory builds configs; clusters connects them"},
	{"internal/credential", module + "/...", "the exec credential plugin stands alone: one request, one Secret, one answer"},
}

type pkgInfo struct {
	path    string // relative to the module
	imports []string
	deps    []string
}

func listPackages(t *testing.T) []pkgInfo {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", module+"/...")
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkgInfo
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 3)
		if len(parts) != 3 {
			t.Fatalf("go list: unexpected line %q", sc.Text())
		}
		p := pkgInfo{path: strings.TrimPrefix(strings.TrimPrefix(parts[0], module), "/"),
			imports: strings.Fields(parts[1]), deps: strings.Fields(parts[2])}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod two folders up from test/arch: %v", err)
	}
	return dir
}

// match says whether path is pattern, or under it when it ends in "/...".
func match(pattern, path string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == prefix || strings.HasPrefix(path, prefix+"/")
	}
	return path == pattern
}

func TestPackagesLiveUnderTheSpecifiedFolders(t *testing.T) {
	for _, p := range listPackages(t) {
		top, _, _ := strings.Cut(p.path, "/")
		if !slices.Contains(roots, top) {
			t.Errorf("package %s is not under %s: the root holds only the specified folders; move it under internal/", p.path, strings.Join(roots, ", "))
		}
	}
}

func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	for _, r := range rules {
		found := false
		for _, p := range pkgs {
			if !match(r.pkg, p.path) {
				continue
			}
			found = true
			for _, d := range p.deps {
				if match(r.mustNot, d) {
					t.Errorf("%s imports %s (directly or through another package): %s", p.path, d, r.why)
				}
			}
		}
		if !found {
			t.Errorf("rule on %s matches no package: update the rule with the tree", r.pkg)
		}
	}
}

// Production code never imports a test harness or the command; a harness
// may import anything.
func TestNothingImportsTestsOrTheCommand(t *testing.T) {
	for _, p := range listPackages(t) {
		if match("test/...", p.path) {
			continue
		}
		for _, d := range p.deps {
			switch {
			case match(module+"/test/...", d):
				t.Errorf("%s imports the test harness %s", p.path, d)
			case match(module+"/cmd/...", d):
				t.Errorf("%s imports the command %s", p.path, d)
			}
		}
	}
}

func TestEveryGoFileCarriesItsLicence(t *testing.T) {
	root := moduleRoot(t)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "_output") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(b, []byte("// SPDX-License-Identifier: Apache-2.0")) {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s does not start with // SPDX-License-Identifier: Apache-2.0", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
