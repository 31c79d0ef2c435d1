// Package reqcopy gives a request back what a handler set on the copy of
// it that it served. A middleware that passes its handler a copy of the
// request (r.WithContext, to put a value in its context; or a copy with
// its Body wrapped) loses to its caller what the handler, or a router in
// it, sets on that copy: the forms it parses, and the pattern and path
// values it matched. Its caller, a middleware further out, reads them
// after its handler returned (a metrics middleware names the route by
// r.Pattern), and net/http removes the files of a multipart form only for
// its own request's MultipartForm, once its handler returned: those of a
// form parsed on a copy are left on disk. The middleware and the timing
// of its Feedback share [Back].
package reqcopy

import (
	"net/http"
	"reflect"
	"strings"
	"unsafe"
)

// Back gives r what a handler set on c, a copy of r it served, for r's
// callers to read after it: the forms it parsed (Form, PostForm,
// MultipartForm) where r has none (net/http then removes the files of
// r's MultipartForm after its handler, and a caller reads them as it
// would on the handler's own request), and the pattern and path values a
// router (http.ServeMux, chi) matched on c, when it changed the pattern:
// the values of r's pattern that c no longer has go with it.
// It compares a few fields, and allocates nothing unless a path value is
// given to an r no router served, by SetPathValue (a map of r's own).
// One a router served, or whose caller set path values by hand
// (r.SetPathValue), which may share its path values with c, takes c's
// fields of them (see takePathValues), so that it writes into nothing
// that c shares. Either way no field of r is written but its forms and
// those a router serving r writes (the pattern and its path values),
// which a goroutine of r's caller may be reading. c may be r: then
// nothing changes.
func Back(r, c *http.Request) {
	Forms(r, c)
	p := c.Pattern
	if p == r.Pattern {
		return
	}
	differs, own := false, false
	wildcards(p, func(name string) {
		differs = differs || c.PathValue(name) != r.PathValue(name)
		own = own || r.PathValue(name) != ""
	})
	// The values of r's own pattern that c lacks (a router in next
	// matched a pattern without them, or none: a 404) are gone from c,
	// as from r had the router served it.
	wildcards(r.Pattern, func(name string) {
		differs = differs || c.PathValue(name) != r.PathValue(name)
	})
	if !differs {
		r.Pattern = p
		return
	}
	if r.Pattern == "" && !own && !handSet(r) {
		// No router served r (one sets its pattern with its path
		// values), nor did its caller set any by hand: r has none, and
		// SetPathValue puts c's in a map of r's own, shared with no
		// copy. It writes no other field of
		// r, which a goroutine of its caller may be reading (a
		// watcher of its context, a logger of its URL), as a router
		// serving r itself would not. The values c holds beyond its
		// pattern's are chi's "*" of a Mount, given too.
		wildcards(p, func(name string) {
			if v := c.PathValue(name); v != "" {
				r.SetPathValue(name, v)
			}
		})
		if v := c.PathValue("*"); v != "" && r.PathValue("*") == "" {
			r.SetPathValue("*", v)
		}
		r.Pattern = p
		return
	}
	// r takes c's path values as a router serving r would have set
	// them, in c's own fields (its pattern's values, and the map of the
	// others), and keeps all else of its own. r.SetPathValue would write
	// into the map of the others, which net/http's copies of a request
	// share (c's, r's, those of any copy of c a goroutine of the handler
	// still reads, and those its caller made of r): a router's, or one
	// its caller made setting path values by hand. Those fields are
	// written alone, as http.ServeMux writes them on the request it
	// routes: a goroutine of r's caller may be reading r's others.
	takePathValues(r, c)
	r.Pattern = p
}

// takePathValues gives r the path values of c, the fields of net/http
// that hold them (the pattern that matched, the values of its wildcards
// and the map of the others), writing no other field of r. Were they
// gone from net/http, r takes a copy of c under its own context, keeping
// every other field of its own.
func takePathValues(r, c *http.Request) {
	if f := pathFields; f.ok {
		rp, cp := unsafe.Pointer(r), unsafe.Pointer(c)
		*(*unsafe.Pointer)(unsafe.Add(rp, f.pat)) = *(*unsafe.Pointer)(unsafe.Add(cp, f.pat))
		*(*[]string)(unsafe.Add(rp, f.matches)) = *(*[]string)(unsafe.Add(cp, f.matches))
		*(*map[string]string)(unsafe.Add(rp, f.other)) = *(*map[string]string)(unsafe.Add(cp, f.other))
		return
	}
	keep := *r
	*r = *c.WithContext(keep.Context())
	r.Method, r.URL, r.Proto, r.ProtoMajor, r.ProtoMinor = keep.Method, keep.URL, keep.Proto, keep.ProtoMajor, keep.ProtoMinor
	r.Header, r.Body, r.GetBody, r.ContentLength, r.TransferEncoding = keep.Header, keep.Body, keep.GetBody, keep.ContentLength, keep.TransferEncoding
	r.Close, r.Host, r.Form, r.PostForm, r.MultipartForm = keep.Close, keep.Host, keep.Form, keep.PostForm, keep.MultipartForm
	r.Trailer, r.RemoteAddr, r.RequestURI, r.TLS, r.Response = keep.Trailer, keep.RemoteAddr, keep.RequestURI, keep.TLS, keep.Response
	//lint:ignore SA1019 r's own, kept as every other field
	r.Cancel = keep.Cancel
}

// Forms gives r the forms parsed on c, a copy of r (Form, PostForm,
// MultipartForm), where r has none: Back's first step, and all of it for
// a copy that no router served. A field c has none of is not written (nil
// over nil), so that a goroutine of r's caller reading r's forms while
// the handler runs meets no write when the handler parsed nothing.
func Forms(r, c *http.Request) {
	if r.Form == nil && c.Form != nil {
		r.Form = c.Form
	}
	if r.PostForm == nil && c.PostForm != nil {
		r.PostForm = c.PostForm
	}
	if r.MultipartForm == nil && c.MultipartForm != nil {
		r.MultipartForm = c.MultipartForm
	}
}

// Trailer readies r, a request about to be copied for a handler, for the
// copy to see the trailer of its body once read: net/http sets the
// Trailer of its own request, as a chunked body (HTTP/1) ends, to a map
// of the trailers its client did not announce (those announced are in
// the map r and its copies share), which a copy made before does not
// see. Given an empty map now, shared by the copies made after, net/http
// adds them to it instead. r is left as it is when it has a Trailer map
// or no transfer coding (no trailer section can come).
func Trailer(r *http.Request) {
	if r.Trailer == nil && len(r.TransferEncoding) != 0 {
		r.Trailer = make(http.Header)
	}
}

// pathFields are the offsets in http.Request of net/http's unexported
// fields that hold its path values, which no method reveals nor sets
// alone: pat (the pattern that matched), matches (the values of its
// wildcards) and otherValues (the map of those SetPathValue sets without
// a pattern). ok is false when net/http has no such fields, of those
// types: then handSet says every request may hold values set by hand,
// and takePathValues copies the whole request.
var pathFields = func() (f struct {
	ok                  bool
	pat, matches, other uintptr
}) {
	t := reflect.TypeFor[http.Request]()
	pat, ok1 := t.FieldByName("pat")
	matches, ok2 := t.FieldByName("matches")
	other, ok3 := t.FieldByName("otherValues")
	if !ok1 || !ok2 || !ok3 || len(pat.Index) != 1 || len(matches.Index) != 1 || len(other.Index) != 1 ||
		pat.Type.Kind() != reflect.Pointer || matches.Type != reflect.TypeFor[[]string]() || other.Type != reflect.TypeFor[map[string]string]() {
		return f
	}
	f.ok, f.pat, f.matches, f.other = true, pat.Offset, matches.Offset, other.Offset
	return f
}()

// handSet reports whether r may hold path values its caller set by hand
// (SetPathValue on a request no router served), in a map r shares with
// the copies made of it. It reads the map, and allocates nothing.
func handSet(r *http.Request) bool {
	return !pathFields.ok || *(*map[string]string)(unsafe.Add(unsafe.Pointer(r), pathFields.other)) != nil
}

// wildcards calls f with the name of each wildcard of pattern, as
// http.ServeMux writes them ({name}, {name...}) and chi does ({name},
// {name:regexp}, and a final * whose path value is named "*").
func wildcards(pattern string, f func(name string)) {
	for rest := pattern; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		rest = rest[i+1:]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			break
		}
		name := strings.TrimSuffix(rest[:j], "...")
		if k := strings.IndexByte(name, ':'); k >= 0 {
			name = name[:k]
		}
		if name != "" && name != "$" {
			f(name)
		}
		rest = rest[j+1:]
	}
	if strings.HasSuffix(pattern, "*") {
		f("*")
	}
}
