// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

// whatIf is diff's --with/--without/--in: an application's manifests
// merged into (or taken out of) one member's snapshot before the head is
// rendered, so an app repository's CI can see what its ServiceExport does
// across the ClusterSet before anything is deployed.
type whatIf struct {
	with, without []string
	in            string
}

func (w *whatIf) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&w.with, "with", nil, "what-if: merge the Namespaces, Services, ServiceExports and GlobalTrafficPolicies of these manifests (a file, a directory of .yaml/.yml/.json, or - for stdin, e.g. kustomize build output) into --in's snapshot before rendering the head; repeatable")
	cmd.Flags().StringArrayVar(&w.without, "without", nil, "what-if: take the Services, ServiceExports and GlobalTrafficPolicies these manifests name out of --in's snapshot; repeatable")
	cmd.Flags().StringVar(&w.in, "in", "", "the member --with and --without apply to")
}

func (w *whatIf) set() bool { return len(w.with)+len(w.without) > 0 }

// describe is how the head is named: "+ app/ in cluster-2".
func (w *whatIf) describe() string {
	var parts []string
	for _, p := range w.with {
		parts = append(parts, "+ "+p)
	}
	for _, p := range w.without {
		parts = append(parts, "- "+p)
	}
	return strings.Join(parts, " ") + " in " + w.in
}

// loadedWhatIf is the manifests read, for one member.
type loadedWhatIf struct {
	member        string
	with, without []*snapshot.Snapshot
}

// load reads every --with and --without; bad input names the file.
func (w *whatIf) load(stdin io.Reader, now time.Time) (*loadedWhatIf, error) {
	if !w.set() {
		if w.in != "" {
			return nil, &exitError{2, errors.New("--in goes with --with or --without")}
		}
		return nil, nil
	}
	if w.in == "" {
		return nil, &exitError{2, errors.New("--with and --without need --in MEMBER: the member whose snapshot they change")}
	}
	if countDash(w.with, w.without) > 1 {
		return nil, &exitError{2, errors.New("stdin (-) can be read once")}
	}
	out := &loadedWhatIf{member: w.in}
	for _, p := range w.with {
		s, err := readManifests(w.in, p, stdin, now)
		if err != nil {
			return nil, err
		}
		out.with = append(out.with, s)
	}
	for _, p := range w.without {
		s, err := readManifests(w.in, p, stdin, now)
		if err != nil {
			return nil, err
		}
		out.without = append(out.without, s)
	}
	return out, nil
}

func countDash(lists ...[]string) int {
	n := 0
	for _, l := range lists {
		for _, p := range l {
			if p == "-" {
				n++
			}
		}
	}
	return n
}

// apply changes the member's snapshot s, if it is the one.
func (l *loadedWhatIf) apply(s *snapshot.Snapshot, now time.Time) {
	if l == nil || s.Member != l.member {
		return
	}
	for _, w := range l.with {
		s.With(w, now)
	}
	for _, w := range l.without {
		s.Without(w)
	}
}

// readManifests reads a file, every .yaml, .yml and .json file under a
// directory (in path order), or stdin for "-".
func readManifests(member, path string, stdin io.Reader, now time.Time) (*snapshot.Snapshot, error) {
	var srcs []snapshot.Source
	switch st, err := os.Stat(path); {
	case path == "-":
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, &exitError{2, fmt.Errorf("stdin: %w", err)}
		}
		srcs = append(srcs, snapshot.Source{File: "stdin", Data: b})
	case err != nil:
		return nil, &exitError{2, fmt.Errorf("--with/--without: %w", err)}
	case st.IsDir():
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch strings.ToLower(filepath.Ext(p)) {
			case ".yaml", ".yml", ".json":
				if d.Type().IsRegular() {
					b, err := os.ReadFile(p)
					if err != nil {
						return err
					}
					srcs = append(srcs, snapshot.Source{File: p, Data: b})
				}
			}
			return nil
		})
		if err != nil {
			return nil, &exitError{2, fmt.Errorf("--with/--without: %w", err)}
		}
		if len(srcs) == 0 {
			return nil, &exitError{2, fmt.Errorf("%s: no .yaml, .yml or .json file", path)}
		}
	default:
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, &exitError{2, fmt.Errorf("--with/--without: %w", err)}
		}
		srcs = append(srcs, snapshot.Source{File: path, Data: b})
	}
	s, err := snapshot.ParseManifests(member, path, srcs, now)
	if err != nil {
		return nil, &exitError{2, err}
	}
	return s, nil
}
