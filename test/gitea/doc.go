// SPDX-License-Identifier: Apache-2.0

// Package gitea runs a real Gitea server for tests of code that talks to a
// forge: pull requests, labels, merges, and pushes over HTTP.
//
// It owns finding the gitea binary that `make testbin` builds
// (test/testbin/build.sh writes $TESTBIN/gitea/gitea with its options/ and
// templates/ beside it), writing an app.ini for a SQLite database in the
// test's temporary directory, creating an admin user with an API token,
// starting Gitea on a free localhost port, waiting until its API answers and
// stopping it at cleanup; and the few API calls a test needs to act as a
// person on the forge (create a repository, a second user, a collaborator,
// merge or close a pull request).
//
// It must not: fake Gitea's answers, put a password or token in a log line
// or failure message (tokens are handed to the test, never printed), reach
// anything but 127.0.0.1, or skip silently: a missing binary skips only
// outside CI, and fails in CI (environment variable CI set).
package gitea
