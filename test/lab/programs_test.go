// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestContainerPrograms: how a container becomes a host process, per the
// Kubernetes rules for command and args over an image's entrypoint.
func TestContainerPrograms(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Hostname: "db-0"}}
	for _, tc := range []struct {
		name     string
		c        corev1.Container
		bin      string
		argv     []string
		env      string // one entry the environment must hold
		errMatch string
	}{
		{name: "echo image: this binary as the echo program",
			c:   corev1.Container{Image: EchoImage, Args: []string{"--http=8080"}},
			bin: exe, argv: []string{"--http=8080"}, env: programEnv + "=echo"},
		{name: "command overrides the image",
			c:   corev1.Container{Image: "alpine/socat:1.7.4.4", Command: []string{"/bin/sh"}, Args: []string{"-c", "true"}},
			bin: "/bin/sh", argv: []string{"-c", "true"}},
		{name: "image without entrypoint: args are the command",
			c:   corev1.Container{Image: "nicolaka/netshoot:v0.15", Args: []string{"/bin/sh", "-ec", "sleep 5"}},
			bin: "/bin/sh", argv: []string{"-ec", "sleep 5"}},
		{name: "hostname from the pod spec",
			c:   corev1.Container{Image: EchoImage},
			bin: exe, env: "HOSTNAME=db-0"},
		{name: "unknown image",
			c:        corev1.Container{Image: "example.com/app:1"},
			errMatch: `no program for image "example.com/app:1"`},
		{name: "unsupported fieldRef",
			c: corev1.Container{Image: EchoImage, Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['a']"}}}}},
			errMatch: "fieldRef metadata.labels['a'] is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := (&node{}).prepareContainer(pod, tc.c)
			if tc.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errMatch) {
					t.Fatalf("error %v, want one containing %q", err, tc.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.prog.bin != tc.bin {
				t.Errorf("program %q, want %q", got.prog.bin, tc.bin)
			}
			if tc.argv != nil && strings.Join(got.argv, " ") != strings.Join(tc.argv, " ") {
				t.Errorf("argv %q, want %q", got.argv, tc.argv)
			}
			if tc.env != "" && !strings.Contains(strings.Join(got.env, "\n"), tc.env) {
				t.Errorf("environment %q lacks %q", got.env, tc.env)
			}
		})
	}
}
