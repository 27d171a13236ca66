// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// The lab has no container runtime: a container's image names a host
// program. This file is the one place that says which.
//
//	EchoImage                        the echo server (echo.go), this binary re-executed
//	registry.k8s.io/coredns/coredns  CoreDNS from testbin
//	alpine/socat                     the host's socat
//	nicolaka/netshoot, busybox, alpine
//	                                 no entrypoint of their own: the container's
//	                                 command (or args) names a host program, as
//	                                 the MCS conformance suite's pods do
//	                                 (sh, socat, nc, nslookup must be installed)
//
// The tag is ignored. A container's command and args are passed to the
// program as they are; an image not listed leaves the pod Pending with the
// reason LabNoProgram.
const (
	// EchoImage runs the lab's echo server: see EchoArgs.
	EchoImage = "mcs-gitops.test/lab-echo:v1"
	// programEnv tells a re-executed lab binary which program to be.
	programEnv = "MCS_GITOPS_LAB_PROGRAM"
)

// selfPrograms are programs this package carries: a pod running one
// re-executes the current binary with programEnv set, and init below
// runs the program instead of the binary's main.
var selfPrograms = map[string]func(args []string) int{
	"echo": echoMain,
	"get":  getMain,
}

func init() {
	name := os.Getenv(programEnv)
	if name == "" {
		return
	}
	main, ok := selfPrograms[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "lab: unknown program %q\n", name)
		os.Exit(127)
	}
	os.Exit(main(os.Args[1:]))
}

// program is how to start an image's or an exec command's program: the
// binary, and the environment to add.
type program struct {
	bin string
	env []string
}

// imageProgram maps a container image to its program.
func imageProgram(image string) (program, error) {
	repo := image
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	switch repo {
	case strings.SplitN(EchoImage, ":", 2)[0]:
		return selfProgram("echo")
	case "alpine/socat":
		return commandProgram("socat")
	case "nicolaka/netshoot", "busybox", "alpine", "docker.io/library/busybox", "docker.io/library/alpine":
		return program{}, nil // the command comes from the container
	case "registry.k8s.io/coredns/coredns", "coredns/coredns":
		dir, err := envtest.AssetsDir()
		if err != nil {
			return program{}, err
		}
		return program{bin: filepath.Join(dir, "coredns")}, nil
	}
	return program{}, fmt.Errorf("no program for image %q in the lab (known: %s, registry.k8s.io/coredns/coredns, and shell images whose command names a host program: nicolaka/netshoot, alpine/socat, busybox, alpine)", image, EchoImage)
}

// commandProgram maps the first word of an exec command to its program:
// one of the package's own (the pod's image gives "echo", and "get" is a
// small HTTP client), else a host program found in PATH.
func commandProgram(name string) (program, error) {
	if _, ok := selfPrograms[name]; ok {
		return selfProgram(name)
	}
	if strings.Contains(name, "/") {
		return program{bin: name}, nil
	}
	known := make([]string, 0, len(selfPrograms))
	for k := range selfPrograms {
		known = append(known, k)
	}
	sort.Strings(known)
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return program{bin: p}, nil
		}
	}
	return program{}, fmt.Errorf("%q: not a lab program (%s) nor on the host's PATH", name, strings.Join(known, ", "))
}

func selfProgram(name string) (program, error) {
	exe, err := os.Executable()
	if err != nil {
		return program{}, fmt.Errorf("lab: locating own binary for %s: %w", name, err)
	}
	return program{bin: exe, env: []string{programEnv + "=" + name}}, nil
}
