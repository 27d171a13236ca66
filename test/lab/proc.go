// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// procOutputTail bounds the output kept per process for failure messages
// and the kubelet's log endpoint.
const procOutputTail = 32 << 10

// proc is one process the lab started: a control-plane component, CoreDNS
// or a container.
type proc struct {
	name    string
	cmd     *exec.Cmd
	out     *envtest.TailBuffer
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid after done is closed
	stopped sync.Once
}

// startProc starts bin with args, inside the named network namespace when
// netns is not empty (through `ip netns exec`, which also bind-mounts
// /etc/netns/<netns>/* over /etc, so a pod sees its own resolv.conf). env
// replaces the environment. The process is killed if the lab's process
// dies, so a crashed test leaves no process outside the lab's namespaces.
func startProc(name, netns string, env []string, bin string, args ...string) (*proc, error) {
	argv := append([]string{bin}, args...)
	if netns != "" {
		argv = append([]string{"ip", "netns", "exec", netns}, argv...)
	}
	p := &proc{name: name, out: &envtest.TailBuffer{Limit: procOutputTail}, done: make(chan struct{})}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", name, bin, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has exited.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process's group and SIGKILL after grace.
func (p *proc) stop(grace time.Duration) {
	p.stopped.Do(func() {
		if p.exited() {
			return
		}
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	})
}

// baseEnv is the environment every lab process starts from: a PATH and
// nothing of the caller's (no KUBECONFIG, no proxies).
func baseEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=/", "LANG=C"}
}
