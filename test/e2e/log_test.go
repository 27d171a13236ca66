// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// controller-runtime's client logs through its own logger, which prints a
// warning with a stack trace when none was set: in the middle of a
// benchmark's result line. The command sets it to its slog logger; the
// tests read the loop's own.
func init() { ctrllog.SetLogger(logr.Discard()) }
