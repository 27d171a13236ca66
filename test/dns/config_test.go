// SPDX-License-Identifier: Apache-2.0

package dns

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mdns "github.com/miekg/dns"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestWriteKubeconfig(t *testing.T) {
	dir := t.TempDir()
	in := &rest.Config{
		Host:            "https://127.0.0.1:6443",
		TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca"), CertData: []byte("cert"), KeyData: []byte("secret-key")},
		BearerToken:     "secret-token",
	}
	path, err := writeKubeconfig(in, dir)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, "kubeconfig") {
		t.Errorf("path = %s", path)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
	out, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if out.Host != in.Host || string(out.CAData) != "ca" || string(out.CertData) != "cert" ||
		string(out.KeyData) != "secret-key" || out.BearerToken != "secret-token" {
		t.Errorf("round trip lost fields: host %q ca %q cert %q", out.Host, out.CAData, out.CertData)
	}

	if _, err := writeKubeconfig(&rest.Config{}, dir); err == nil {
		t.Error("a config without host must be an error")
	}
}

func TestCorefile(t *testing.T) {
	got := corefile("clusterset.local", "/tmp/x/kubeconfig", 1053, 8181)
	for _, want := range []string{
		"cluster.local:1053 clusterset.local:1053 {",
		"bind 127.0.0.1",
		"ready 127.0.0.1:8181",
		"kubernetes cluster.local clusterset.local {",
		`kubeconfig "/tmp/x/kubeconfig"`,
		"multicluster clusterset.local",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Corefile lacks %q:\n%s", want, got)
		}
	}
}

func TestRecords(t *testing.T) {
	m := new(mdns.Msg)
	hdr := func(rrtype uint16) mdns.RR_Header {
		return mdns.RR_Header{Name: "x.", Rrtype: rrtype, Class: mdns.ClassINET, Ttl: 5}
	}
	m.Answer = []mdns.RR{
		&mdns.SRV{Hdr: hdr(mdns.TypeSRV), Port: 80, Target: "a.b."},
		&mdns.A{Hdr: hdr(mdns.TypeA), A: net.ParseIP("10.0.0.2")},
		&mdns.AAAA{Hdr: hdr(mdns.TypeAAAA), AAAA: net.ParseIP("fd00::1")},
		&mdns.TXT{Hdr: hdr(mdns.TypeTXT), Txt: []string{"v"}},
	}
	got := strings.Join(Records(m), "|")
	if want := `"v"|10.0.0.2|80 a.b.|fd00::1`; got != want {
		t.Errorf("Records = %s, want %s", got, want)
	}
}

func TestInCI(t *testing.T) {
	for v, want := range map[string]bool{"": false, "false": false, "0": false, "true": true, "1": true, "yes": true} {
		t.Setenv("CI", v)
		if got := InCI(); got != want {
			t.Errorf("CI=%q: InCI() = %v, want %v", v, got, want)
		}
	}
}
