package drpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ErrorBody is the JSON answer of a request that got no result. Kind is
// "unknown_function" (404), "invalid" (400), "busy" (503), "timeout"
// (504), "failed" (500) or "stopped" (503).
type ErrorBody struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// Handler serves the functions over HTTP:
//
//	POST /drpc/{function}?timeout=2s     body: the arguments
//
// It answers a Result as JSON (200), or an ErrorBody. The deadline is the
// timeout parameter (Go duration syntax), or the Config's Timeout, at
// most its MaxTimeout.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /drpc/{function}", func(w http.ResponseWriter, r *http.Request) {
		var timeout time.Duration
		if v := r.URL.Query().Get("timeout"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				writeError(w, http.StatusBadRequest, "invalid", fmt.Sprintf("timeout=%q: want a positive duration such as 2s", v))
				return
			}
			timeout = d
		}
		args, err := io.ReadAll(io.LimitReader(r.Body, int64(s.cfg.MaxArgs)+1))
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid", "reading the arguments: "+err.Error())
			return
		}
		if len(args) > s.cfg.MaxArgs {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid", fmt.Sprintf("arguments over %d bytes", s.cfg.MaxArgs))
			return
		}
		res, err := s.Execute(r.Context(), r.PathValue("function"), string(args), timeout)
		if err != nil {
			code, kind := status(err)
			writeError(w, code, kind, err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(res)
	})
	return mux
}

func status(err error) (int, string) {
	switch {
	case errors.Is(err, ErrUnknownFunction):
		return http.StatusNotFound, "unknown_function"
	case errors.Is(err, ErrBusy):
		return http.StatusServiceUnavailable, "busy"
	case errors.Is(err, ErrStopped):
		return http.StatusServiceUnavailable, "stopped"
	case errors.Is(err, ErrTimeout):
		return http.StatusGatewayTimeout, "timeout"
	case errors.Is(err, ErrFailed):
		return http.StatusInternalServerError, "failed"
	}
	return http.StatusBadRequest, "invalid"
}

func writeError(w http.ResponseWriter, code int, kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(ErrorBody{Error: msg, Kind: kind})
}
