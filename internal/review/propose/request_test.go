// SPDX-License-Identifier: Apache-2.0

package propose

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/mcs-gitops/mcs-gitops/internal/review"
)

// A tenant's names are up to 63 characters each; the request made of them
// must still be one every forge takes and keeps as sent.
func TestProposalTextFitsTheForge(t *testing.T) {
	ns, name := strings.Repeat("n", 63), strings.Repeat("s", 63)
	p := &review.Proposal{
		Name: "service/" + ns + "/" + name, Kinds: []review.Kind{review.KindExport, review.KindImport}, Digest: "d1",
		Summary: []string{fmt.Sprintf("cluster-1 exports %s/%s", ns, name)},
	}
	for i := range 5000 {
		p.Summary = append(p.Summary, fmt.Sprintf("member-%04d imports %s/%s", i, ns, name))
	}
	title := Title(p)
	assert.Len(t, title, maxTitle)
	assert.True(t, strings.HasPrefix(title, "mcs-gitops: service/"+ns+"/"))
	assert.True(t, strings.HasSuffix(title, cutMark))

	files := map[string][]byte{}
	for i := range 200 {
		files[fmt.Sprintf("clusters/member-%04d/%s/%s/serviceimport.yaml", i, ns, name)] = []byte("x")
	}
	body := Body(p, nil, nil, files)
	assert.LessOrEqual(t, len(body), maxBody)
	assert.True(t, utf8.ValidString(body))
	assert.Contains(t, body, "cluster-1 exports "+ns+"/"+name, "the full names are in the body")
	assert.Contains(t, body, cutNote)
	assert.True(t, strings.HasSuffix(body, "<!-- mcs-gitops proposal "+p.Name+" digest d1 -->\n"), "the marker is never cut")

	// A usual proposal is not touched.
	short := &review.Proposal{Name: "service/demo/web", Kinds: []review.Kind{review.KindExport}, Digest: "d2",
		Summary: []string{"cluster-1 exports demo/web", "cluster-2 imports demo/web"}}
	assert.Equal(t, "mcs-gitops: service/demo/web: cluster-1 exports demo/web (+1 more)", Title(short))
	assert.NotContains(t, Body(short, nil, nil, map[string][]byte{"clusters/cluster-2/demo/web/serviceimport.yaml": []byte("x")}), cutNote)
}

// Titles are cut in bytes, never inside a character.
func TestProposalTitleCutsWholeCharacters(t *testing.T) {
	p := &review.Proposal{Name: "service/demo/web", Summary: []string{strings.Repeat("é", 300)}}
	title := Title(p)
	assert.True(t, utf8.ValidString(title))
	assert.LessOrEqual(t, len(title), maxTitle)
	assert.GreaterOrEqual(t, len(title), maxTitle-1)
	assert.True(t, strings.HasSuffix(title, cutMark))
}

func TestCutLines(t *testing.T) {
	assert.Equal(t, "a\nb\n", cutLines("a\nb\n", 4))
	assert.Equal(t, "a\n"+cutNote, cutLines("a\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n", 2+len(cutNote)+3))
	assert.Equal(t, cutNote, cutLines(strings.Repeat("x", 500), 10), "no line fits: the note alone")
}

// Whatever the names and summaries, the title and body fit the forge,
// stay valid UTF-8, and keep the marker the proposal is found by.
func FuzzProposalText(f *testing.F) {
	f.Add("service/demo/web", "cluster-1 exports demo/web", 1, 1)
	f.Add("service/"+strings.Repeat("n", 63)+"/"+strings.Repeat("s", 63), strings.Repeat("é", 200), 3000, 300)
	f.Fuzz(func(t *testing.T, name, summary string, lines, members int) {
		if !utf8.ValidString(name) || !utf8.ValidString(summary) || len(name) > 200 {
			t.Skip("proposal names are short ASCII; summaries are text")
		}
		lines, members = min(max(lines, 0), 5000), min(max(members, 0), 500)
		p := &review.Proposal{Name: name, Kinds: []review.Kind{review.KindExport}, Digest: "d"}
		for i := range lines {
			p.Summary = append(p.Summary, fmt.Sprintf("%s %d", summary, i))
		}
		files := map[string][]byte{}
		for i := range members {
			files[fmt.Sprintf("clusters/m%d/demo/web/serviceimport.yaml", i)] = []byte("x")
		}
		title, body := Title(p), Body(p, nil, nil, files)
		if len(title) > maxTitle || !utf8.ValidString(title) {
			t.Fatalf("title of %d bytes, valid %t", len(title), utf8.ValidString(title))
		}
		if len(body) > maxBody || !utf8.ValidString(body) {
			t.Fatalf("body of %d bytes, valid %t", len(body), utf8.ValidString(body))
		}
		if !strings.HasSuffix(body, "<!-- mcs-gitops proposal "+name+" digest d -->\n") {
			t.Fatal("the marker was cut")
		}
	})
}

// A proposal's commit names it in its trailer, whatever the summary says;
// a message without the trailer names none.
func TestNamed(t *testing.T) {
	p := &review.Proposal{Name: "service/demo/web", Kinds: []review.Kind{review.KindExport}, Digest: "d1",
		Summary: []string{"cluster-1 exports demo/web", "Proposal: not/this/one"}}
	assert.Equal(t, "service/demo/web", Named(Message(p)))
	assert.Equal(t, "", Named("update rendered tree (1 files)\n\nSnapshot-Digest: sha256:0\n"))
}
