// SPDX-License-Identifier: Apache-2.0

package gitea

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

const (
	// AdminName is the site administrator Start creates; Server.Token is
	// its API token and it owns the repositories CreateRepo makes.
	AdminName = "lab"

	// startTimeout bounds one start attempt (the web server binding and
	// answering /api/v1/version). Gitea is ready in a second or two alone;
	// generous because tests share two cores with apiservers and builds.
	startTimeout = 60 * time.Second
	// commandTimeout bounds the one-shot commands run before the server
	// (migrate, admin user create).
	commandTimeout = 2 * time.Minute
	// startAttempts retries when a port picked as free was taken before
	// Gitea bound it.
	startAttempts = 3
	// stopTimeout is how long Gitea gets to exit after an interrupt before
	// it is killed.
	stopTimeout = 10 * time.Second
	// outputTail bounds the Gitea output kept for failure messages.
	outputTail = 64 << 10
)

// Server is one running Gitea with an admin user.
type Server struct {
	// URL is Gitea's root URL, "http://127.0.0.1:<port>/" (the API is
	// under api/v1/).
	URL string
	// Token is an API token of the admin (AdminName) with the scopes
	// write:repository, write:user, write:issue and write:admin.
	Token string
	// Started is how long Start took, from the first command to the first
	// answer of the API, for tests that report it.
	Started time.Duration

	dir, bin, config string
	password         string
	out              *envtest.TailBuffer
	cmd              *exec.Cmd
	done             chan struct{} // closed when the process has exited
	waitErr          error         // valid after done is closed
	stopOnce         sync.Once
}

// Start runs a Gitea for t: an app.ini and SQLite database in t.TempDir(),
// the schema migrated, an admin user AdminName with an API token, the web
// server on a free 127.0.0.1 port with SSH and registration off. It returns
// once the API answers. The process is stopped at cleanup and its output
// is logged if t failed. A missing binary skips t outside CI and fails it
// in CI (Require).
func Start(t testing.TB) *Server {
	t.Helper()
	bin, staticRoot := Require(t)
	began := time.Now()
	dir := t.TempDir()
	s := &Server{dir: dir, bin: bin, out: &envtest.TailBuffer{Limit: outputTail}}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("gitea output (last %d bytes):\n%s", outputTail, s.out.String())
		}
	})
	pw, err := randomHex(16)
	if err != nil {
		t.Fatalf("gitea.Start: %v", err)
	}
	s.password = pw
	// setup is the one-shot commands' share of the start (schema and
	// admin); the rest is the web server coming up.
	var setup time.Duration
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("gitea.Start: %v", err)
		}
		if err := s.configure(staticRoot, port); err != nil {
			t.Fatalf("gitea.Start: %v", err)
		}
		if attempt == 1 {
			phase := time.Now()
			if err := s.run("migrate"); err != nil {
				t.Fatalf("gitea.Start: %v", err)
			}
			// The password goes on a command line of a process in the
			// test's own temporary directory, never into a log line.
			if err := s.run("admin", "user", "create", "--admin", "--username", AdminName,
				"--password", s.password, "--email", AdminName+"@example.com", "--must-change-password=false"); err != nil {
				t.Fatalf("gitea.Start: %v", err)
			}
			setup = time.Since(phase)
		}
		if err := s.launch(); err != nil {
			t.Fatalf("gitea.Start: %v", err)
		}
		err = s.waitReady()
		if err == nil {
			break
		}
		s.stop()
		if attempt < startAttempts && strings.Contains(s.out.String(), "address already in use") {
			t.Logf("gitea: port %d taken before it could bind (%v); retrying with another", port, err)
			s.stopOnce = sync.Once{}
			continue
		}
		t.Fatalf("gitea.Start: gitea did not become ready: %v\nits output:\n%s", err, s.out.String())
	}
	tok, err := s.createToken(AdminName, s.password, "admin", "write:repository", "write:user", "write:issue", "write:admin")
	if err != nil {
		t.Fatalf("gitea.Start: admin token: %v", err)
	}
	s.Token = tok
	s.Started = time.Since(began)
	t.Logf("gitea serving %s (ready in %s: migrate and admin %s; work dir %s)", s.URL,
		s.Started.Round(time.Millisecond), setup.Round(time.Millisecond), dir)
	return s
}

// configure writes custom/conf/app.ini for port. Gitea rewrites the file
// at start to add the secrets it generates, which is why it lives in the
// test's directory and is never logged.
func (s *Server) configure(staticRoot string, port int) error {
	s.URL = fmt.Sprintf("http://127.0.0.1:%d/", port)
	s.config = filepath.Join(s.dir, "custom", "conf", "app.ini")
	// Running as root is refused unless said to be intended: the test
	// machines run as root and the server lives in a temporary directory.
	ini := fmt.Sprintf(`I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true
APP_NAME = lab
RUN_MODE = prod
WORK_PATH = %[1]s

[database]
DB_TYPE = sqlite3
PATH = %[1]s/data/gitea.db

[server]
STATIC_ROOT_PATH = %[2]s
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[3]d
ROOT_URL = %[4]s
DISABLE_SSH = true
OFFLINE_MODE = true
LFS_START_SERVER = false

[security]
INSTALL_LOCK = true

[repository]
ROOT = %[1]s/repos
DEFAULT_BRANCH = main

[indexer]
ISSUE_INDEXER_TYPE = db

[log]
LEVEL = Warn

[service]
DISABLE_REGISTRATION = true

[mailer]
ENABLED = false
`, s.dir, staticRoot, port, s.URL)
	if err := os.MkdirAll(filepath.Dir(s.config), 0o700); err != nil {
		return fmt.Errorf("creating the config directory: %w", err)
	}
	if err := os.WriteFile(s.config, []byte(ini), 0o600); err != nil {
		return fmt.Errorf("writing app.ini: %w", err)
	}
	return nil
}

// command is gitea with the work path and config of s, in an environment
// that holds nothing of whoever runs the tests that Gitea would read.
func (s *Server) command(ctx context.Context, args ...string) *exec.Cmd {
	full := append([]string{"--work-path", s.dir, "--config", s.config}, args...)
	var cmd *exec.Cmd
	if ctx != nil {
		cmd = exec.CommandContext(ctx, s.bin, full...)
	} else {
		cmd = exec.Command(s.bin, full...)
	}
	cmd.Dir = s.dir
	cmd.Env = append(filterEnv(os.Environ(), "HOME", "USER", "GITEA_", "GIT_"), "HOME="+s.dir, "USER=root")
	return cmd
}

// run runs a one-shot gitea command; its output goes to the kept log.
func (s *Server) run(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := s.command(ctx, args...)
	cmd.Stdout, cmd.Stderr = s.out, s.out
	if err := cmd.Run(); err != nil {
		// The first three arguments name the command (admin user create)
		// without the password that follows them.
		name := strings.Join(args[:min(len(args), 3)], " ")
		return fmt.Errorf("gitea %s: %w\nits output:\n%s", name, err, s.out.String())
	}
	return nil
}

func (s *Server) launch() error {
	s.done = make(chan struct{})
	s.cmd = s.command(nil, "web")
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s web: %w", s.bin, err)
	}
	cmd, done := s.cmd, s.done
	go func() {
		s.waitErr = cmd.Wait()
		close(done)
	}()
	return nil
}

// waitReady polls GET /api/v1/version until it answers 200.
func (s *Server) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	httpc := &http.Client{Timeout: 2 * time.Second}
	var last error = errors.New("not polled yet")
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return fmt.Errorf("gitea exited: %v", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %v", startTimeout, last)
		case <-tick.C:
		}
		resp, err := httpc.Get(s.URL + "api/v1/version")
		if err != nil {
			last = err
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		last = fmt.Errorf("GET /api/v1/version: %s", resp.Status)
	}
}

// stop interrupts Gitea, and kills it if it has not exited after
// stopTimeout. Safe to call more than once.
func (s *Server) stop() {
	s.stopOnce.Do(func() {
		if s.cmd == nil || s.cmd.Process == nil {
			return
		}
		select {
		case <-s.done:
			return
		default:
		}
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(stopTimeout):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// filterEnv drops the variables named exactly, and those starting with a
// name that ends in "_".
func filterEnv(env []string, drop ...string) []string {
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, d := range drop {
			if strings.HasPrefix(kv, d+"=") || (strings.HasSuffix(d, "_") && strings.HasPrefix(kv, d)) {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// CPU is the processor time Gitea has used so far, its own and that of
// the git processes it ran and waited for, from /proc: benchmarks report
// the forge's share of a cycle with it.
func (s *Server) CPU() (time.Duration, error) {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0, errors.New("gitea is not running")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("gitea's CPU time: %w", err)
	}
	// The command name (field 2) is in parentheses and may hold spaces;
	// utime, stime, cutime and cstime are fields 14 to 17.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 15 {
		return 0, fmt.Errorf("gitea's CPU time: /proc/%d/stat: unexpected %q", s.cmd.Process.Pid, b)
	}
	var ticks int64
	for _, s := range f[11:15] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("gitea's CPU time: %w", err)
		}
		ticks += n
	}
	// USER_HZ is 100 on every Linux this runs on.
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
