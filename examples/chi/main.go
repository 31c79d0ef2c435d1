// Command chi is a small server showing ratekeeper under the chi router:
// global limits per client IP for every route, and the stricter
// write-endpoint preset for login, register and comments, keyed by client IP
// plus user. The router is built by package chiapp, beside this file.
//
//	go run ./examples/chi -addr 127.0.0.1:8080
//	curl -i http://127.0.0.1:8080/
//	for i in 1 2 3 4 5 6; do curl -si -d username=ann http://127.0.0.1:8080/login | head -1; done
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/examples/chi/chiapp"
	"github.com/ratekeeper/ratekeeper/examples/internal/app"
	"github.com/ratekeeper/ratekeeper/middleware"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	store, err := algorithms.NewMemoryStore(algorithms.WithMaxKeys(1_000_000))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	h, err := chiapp.NewHandler(store, middleware.WithErrorHandler(app.LogError))
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	log.Printf("listening on http://%s", *addr)
	log.Fatal(srv.ListenAndServe())
}
