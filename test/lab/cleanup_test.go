// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCleanLeftovers: a lab that crashed left a namespace with a process
// in it, an /etc/netns directory and its record; the next start removes
// all three and leaves a running lab's namespace alone.
func TestCleanLeftovers(t *testing.T) {
	if err := Requirements(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	// A dead owner: a process that has exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	crashed, live := "dead01", "live01"
	for id, pid := range map[string]int{crashed: dead.Process.Pid, live: os.Getpid()} {
		dir := filepath.Join(recordsDir, id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			t.Fatal(err)
		}
		ns := netnsPrefix + id + "-n1"
		if err := ip("netns", "add", ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = deleteNetns(ns)
			_ = os.RemoveAll(dir)
		})
		if err := writeResolvConf(ns, []byte("nameserver 10.96.0.10\n")); err != nil {
			t.Fatal(err)
		}
	}
	orphan := exec.Command("ip", "netns", "exec", netnsPrefix+crashed+"-n1", "sleep", "300")
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = orphan.Wait(); close(exited) }()
	t.Cleanup(func() { _ = orphan.Process.Kill() })
	// `ip netns exec` enters the namespace after Start returns; a crashed
	// lab's process is in it already, so wait for that before cleaning
	// (a CI run cleaned first and the process, not yet in, survived).
	waitInNetns(t, netnsPrefix+crashed+"-n1", orphan.Process.Pid)

	if err := CleanLeftovers(); err != nil {
		t.Fatal(err)
	}
	if netnsExists(netnsPrefix + crashed + "-n1") {
		t.Error("the crashed lab's namespace is still there")
	}
	if _, err := os.Stat(filepath.Join("/etc/netns", netnsPrefix+crashed+"-n1")); !os.IsNotExist(err) {
		t.Errorf("the crashed lab's /etc/netns directory is still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(recordsDir, crashed)); !os.IsNotExist(err) {
		t.Errorf("the crashed lab's record is still there (%v)", err)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Error("the process left in the crashed lab's namespace still runs")
	}
	if !netnsExists(netnsPrefix + live + "-n1") {
		t.Error("a running lab's namespace was removed")
	}
}

// waitInNetns waits until the namespace lists the process.
func waitInNetns(t *testing.T, ns string, pid int) {
	t.Helper()
	want := strconv.Itoa(pid)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		out, err := run("ip", "netns", "pids", ns)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(strings.Fields(string(out)), want) {
			return
		}
	}
	t.Fatalf("process %d never entered namespace %s", pid, ns)
}
