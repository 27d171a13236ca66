// SPDX-License-Identifier: Apache-2.0

package clusters

// ParseMemoStats is how many listed custom resources m's reads found in
// its parse memo (hits) and had to parse (misses).
func ParseMemoStats(m *Member) (hits, misses int) {
	m.parsed.mu.Lock()
	defer m.parsed.mu.Unlock()
	return m.parsed.hits, m.parsed.misses
}
