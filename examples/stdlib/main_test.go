package main

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/examples/internal/apptest"
)

func TestHandler(t *testing.T) { apptest.Run(t, newHandler) }
