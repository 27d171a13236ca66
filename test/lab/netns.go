// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns` keeps its named namespaces.
const netnsDir = "/var/run/netns"

// ip runs `ip args...` and returns an error carrying its output.
func ip(args ...string) error {
	_, err := run("ip", args...)
	return err
}

// run runs a host command, returning its combined output and, on failure,
// an error naming the command and quoting the output.
func run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.Bytes(), nil
}

// inNetns runs fn on an OS thread that has entered the named network
// namespace. Sockets fn creates belong to that namespace for their whole
// life, wherever they are used afterwards. fn must not start goroutines that
// create sockets: they would run on other threads, in the host's namespace.
func inNetns(name string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		// The thread is only returned to the scheduler once it is back in
		// the namespace it came from; if that fails, it stays locked and
		// dies with this goroutine.
		runtime.LockOSThread()
		orig, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("netns %s: %w", name, err)
			return
		}
		defer orig.Close()
		target, err := os.Open(filepath.Join(netnsDir, name))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("netns %s: %w", name, err)
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("netns %s: enter: %w", name, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("netns %s: leave: %w (after: %v)", name, err, ferr)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// dialIn connects from inside the named namespace. addr must be a literal
// IP and port: resolving a name, or racing two addresses, would happen on
// other threads.
func dialIn(ctx context.Context, netns, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if net.ParseIP(host) == nil {
		return nil, fmt.Errorf("dial %s in %s: not an IP address (resolve first)", addr, netns)
	}
	var c net.Conn
	err = inNetns(netns, func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// listenIn listens on addr inside the named namespace.
func listenIn(netns, network, addr string) (net.Listener, error) {
	var l net.Listener
	err := inNetns(netns, func() error {
		var err error
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}

// sysctlIn sets a sysctl in the named namespace (net.* sysctls are per
// namespace).
func sysctlIn(netns string, kv ...string) error {
	args := append([]string{"netns", "exec", netns, "sysctl", "-q", "-w"}, kv...)
	return ip(args...)
}

// netnsExists reports whether the named namespace exists.
func netnsExists(name string) bool {
	_, err := os.Stat(filepath.Join(netnsDir, name))
	return err == nil
}

// listNetns returns the names of the named namespaces starting with prefix.
func listNetns(prefix string) ([]string, error) {
	ents, err := os.ReadDir(netnsDir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// deleteNetns kills every process left in the namespace, then deletes it
// and its /etc/netns directory. A namespace that is already gone is fine.
func deleteNetns(name string) error {
	killNetnsProcs(name)
	var err error
	if netnsExists(name) {
		err = ip("netns", "delete", name)
	}
	if rerr := os.RemoveAll(filepath.Join("/etc/netns", name)); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// killNetnsProcs kills every process in the named namespace.
func killNetnsProcs(name string) {
	out, err := run("ip", "netns", "pids", name)
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(out)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil && pid > 1 {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}
