// Package gitsync owns the rendered repository on disk and in Git: writing
// the rendered tree so that it holds exactly what was rendered (and nothing
// stale), deciding whether anything changed, and, with go-git, committing
// and pushing.
//
// It does not decide what to render and never reads cluster credentials.
package gitsync
