// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sort"
)

// SnapshotDigest identifies a set of input files (e.g. inputs/<member>.yaml
// and clusterset.yaml): "sha256:" and the hex SHA-256 over the sorted
// paths, each followed by its content's length and bytes, so the same
// snapshot always gives the same digest and no two sets collide by
// moving bytes between files.
func SnapshotDigest(inputs map[string][]byte) string {
	paths := make([]string, 0, len(inputs))
	for p := range inputs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	var n [8]byte
	for _, p := range paths {
		h.Write([]byte(p))
		h.Write([]byte{0})
		binary.BigEndian.PutUint64(n[:], uint64(len(inputs[p])))
		h.Write(n[:])
		h.Write(inputs[p])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
