// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Every lab has an ID; everything it creates in the host's tables is named
// after it: network namespaces "mcslab-<id>-…" and their /etc/netns
// directories. A record directory holds the owning process's PID, so the
// next lab to start can tell a running lab's namespaces (left alone) from a
// crashed one's (removed).
const (
	netnsPrefix = "mcslab-"
	recordsDir  = "/run/mcs-gitops-lab"
)

// newID makes a lab ID no live or recorded lab has, and records this
// process as its owner.
func newID() (string, error) {
	if err := os.MkdirAll(recordsDir, 0o755); err != nil {
		return "", fmt.Errorf("lab records: %w", err)
	}
	for range 16 {
		b := make([]byte, 3)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		id := hex.EncodeToString(b)
		dir := filepath.Join(recordsDir, id)
		if err := os.Mkdir(dir, 0o755); err != nil {
			if errors.Is(err, os.ErrExist) {
				continue
			}
			return "", fmt.Errorf("lab records: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return "", fmt.Errorf("lab records: %w", err)
		}
		return id, nil
	}
	return "", errors.New("lab: no free ID after 16 tries")
}

// alive reports whether the lab with this record is owned by a running
// process.
func alive(id string) bool {
	b, err := os.ReadFile(filepath.Join(recordsDir, id, "pid"))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return false
	}
	return unix.Kill(pid, 0) == nil
}

// CleanLeftovers removes what crashed labs left behind: the network
// namespaces (and any process still in them) and /etc/netns directories of
// every lab whose owning process is gone. Start calls it; it is safe while
// other labs run.
func CleanLeftovers() error {
	names, err := listNetns(netnsPrefix)
	if err != nil {
		return fmt.Errorf("lab cleanup: %w", err)
	}
	etc, _ := os.ReadDir("/etc/netns")
	for _, e := range etc {
		if strings.HasPrefix(e.Name(), netnsPrefix) && !netnsExists(e.Name()) {
			names = append(names, e.Name())
		}
	}
	recs, _ := os.ReadDir(recordsDir)
	dead := map[string]bool{}
	for _, r := range recs {
		if !alive(r.Name()) {
			dead[r.Name()] = true
		}
	}
	var errs []error
	for _, name := range names {
		id, _, _ := strings.Cut(strings.TrimPrefix(name, netnsPrefix), "-")
		if _, recorded := dead[id]; !recorded && alive(id) {
			continue
		}
		if err := deleteNetns(name); err != nil {
			errs = append(errs, err)
		}
	}
	for id := range dead {
		if err := os.RemoveAll(filepath.Join(recordsDir, id)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("lab cleanup: %w", err)
	}
	return nil
}
