package middleware_test

import (
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLegacyPolicyDistinctQuotas: in the draft -06 and -07 profiles the
// RateLimit-Policy list holds no two members of the same quota value
// (those drafts: they MUST NOT share one), keeping of them the longest
// window (policy.Set.LegacyPolicyHeader), also across middlewares nested
// on a chi router, whose lines make one list: a line's member that a
// member of another line with the same quota value and a longer window
// (or the same window, further out) shadows is left out, and a line left
// empty is dropped. Before, `100;w=60, 100;w=3600` and, nested, the lines
// `100;w=60` and `100;w=3600, 10;w=1`.
func TestLegacyPolicyDistinctQuotas(t *testing.T) {
	for _, tt := range []struct {
		name         string
		outer, inner []*policy.Policy // outer nil: one middleware
		want         string           // the field's lines, joined by "|"
	}{
		{name: "one middleware",
			inner: []*policy.Policy{fixed("minute", 100, time.Minute, remote), fixed("hour", 100, time.Hour, remote)},
			want:  "100;w=3600"},
		{name: "nested, inner longer",
			outer: []*policy.Policy{fixed("minute", 100, time.Minute, remote)},
			inner: []*policy.Policy{fixed("hour", 100, time.Hour, remote), fixed("second", 10, time.Second, remote)},
			want:  "100;w=3600, 10;w=1"},
		{name: "nested, outer longer",
			outer: []*policy.Policy{fixed("hour", 100, time.Hour, remote), fixed("day", 5000, 24*time.Hour, remote)},
			inner: []*policy.Policy{fixed("second", 10, time.Second, remote), fixed("minute", 100, time.Minute, remote)},
			want:  "100;w=3600, 5000;w=86400|10;w=1"},
		{name: "nested, same window",
			outer: []*policy.Policy{fixed("global", 100, time.Minute, remote)},
			inner: []*policy.Policy{fixed("route", 100, time.Minute, remote)},
			want:  "100;w=60"},
		{name: "nested, distinct",
			outer: []*policy.Policy{fixed("global", 100, time.Minute, remote)},
			inner: []*policy.Policy{fixed("route", 5, time.Minute, remote)},
			want:  "100;w=60|5;w=60"},
	} {
		for _, p := range []middleware.Profile{middleware.Draft6, middleware.Draft7} {
			t.Run(tt.name+"/"+p.String(), func(t *testing.T) {
				store, clock := newStore(t)
				r := chi.NewRouter()
				if tt.outer != nil {
					r.Use(middleware.MustNew(store, tt.outer, middleware.WithHeaders(p), middleware.WithClock(clock)).Handler)
				}
				inner := middleware.MustNew(store, tt.inner, middleware.WithHeaders(p), middleware.WithClock(clock))
				r.With(inner.Handler).Get("/x", ok)
				w := serve(r, "GET", "/x")
				if got := strings.Join(w.Header().Values("RateLimit-Policy"), "|"); w.Code != 200 || got != tt.want {
					t.Errorf("%d RateLimit-Policy %q, want 200 %q", w.Code, got, tt.want)
				}
			})
		}
	}
}
