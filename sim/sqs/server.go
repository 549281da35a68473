// Package sqs is a local Amazon SQS endpoint for the local world and tests.
//
// Server is an http.Handler that speaks the SQS AWS JSON 1.0 protocol
// (POST with X-Amz-Target: AmazonSQS.<Operation>, JSON bodies, errors as
// {"__type": ..., "message": ...} plus the x-amzn-query-error header)
// closely enough that the real aws-sdk-go-v2 SQS client, which sends AWS
// JSON since v1.28, accepts it when pointed at it with BaseEndpoint,
// including its MD5 checks of message bodies. With Options.Guard,
// signatures are verified and each call authorized on its queue (auth.go).
//
// Why not goaws: the maintained emulator (github.com/Admiral-Piett/goaws)
// speaks AWS JSON only from v0.5.0; the module proxy available here has
// v0.4.5, which answers the SDK's JSON requests with 400 Bad Request.
//
// Supported operations: CreateQueue, GetQueueUrl, ListQueues, SendMessage,
// ReceiveMessage (long polling with WaitTimeSeconds, visibility timeout,
// ApproximateReceiveCount), DeleteMessage, GetQueueAttributes
// (ApproximateNumberOfMessages[NotVisible]), PurgeQueue. Standard queues
// only, which may deliver a message twice and out of order when
// Options.DuplicateFraction and Options.Reorder say so (standard.go);
// message attributes are ignored. State is in memory.
package sqs

import (
	"cmp"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/internal/reqlog"
	"github.com/joinery/joinery/sim/internal/serve"
	"github.com/joinery/joinery/sim/internal/throttle"
)

// Defaults of a queue (SQS's own).
const (
	DefaultVisibilityTimeout = 30 * time.Second
	MaxWaitTime              = 20 * time.Second
)

// Server is the local SQS endpoint; create it with New. Safe for concurrent use.
type Server struct {
	reqlog.Recorder[Request] // SetRecording, Requests, ResetRequests

	mu        sync.Mutex
	region    string
	account   string
	baseURL   string // set by Start; queue URLs are <baseURL>/<account>/<name>
	queues    map[string]*queue
	handles   map[string]string // receipt handle -> message id
	seq       uint64
	now       func() time.Time
	closed    chan struct{}
	closeOnce sync.Once
	guard     *awsauth.Guard

	buckets     *throttle.Set // nil: never throttled
	rng         *mrand.Rand   // duplicates and receive order (standard.go)
	dupFraction float64
	reorder     bool
}

type queue struct {
	name       string
	visibility time.Duration
	created    time.Time
	msgs       []*message    // in send order; deleted ones are removed
	wake       chan struct{} // closed and replaced on every send
}

type message struct {
	id           string
	body         string
	md5          string
	sent         time.Time
	visibleAt    time.Time
	receiveCount int
	handle       string // latest receipt handle
	firstReceive time.Time
}

// Options configures New.
type Options struct {
	Region  string // default us-east-1
	Account string // default 123456789012
	// Guard, when set, authenticates every request (SigV4) and authorizes
	// sqs:<op> on the queue it names (sim/awsauth).
	Guard *awsauth.Guard
	// ThrottleScale turns on each action's bucket (throttle.go) times this
	// factor: calls past it answer RequestThrottled. 0: no buckets.
	ThrottleScale float64
	// DuplicateFraction is the probability, in [0, 1], that a sent message
	// is stored twice, as a standard queue may: the copy is received (and
	// must be deleted) on its own, up to 2 s later.
	DuplicateFraction float64
	// Reorder makes each receive take visible messages in a random order
	// instead of the order they were sent in.
	Reorder bool
	// Seed seeds the duplicate and order draws (default 1).
	Seed uint64
}

// New returns a Server without queues.
func New(o Options) *Server {
	o.Region = cmp.Or(o.Region, serve.DefaultRegion)
	o.Account = cmp.Or(o.Account, serve.DefaultAccount)
	return &Server{region: o.Region, account: o.Account, guard: o.Guard, queues: map[string]*queue{}, handles: map[string]string{},
		now: time.Now, closed: make(chan struct{}), baseURL: "http://127.0.0.1",
		buckets: throttle.NewSet(o.ThrottleScale, nil), rng: newRand(o.Seed), dupFraction: o.DuplicateFraction, reorder: o.Reorder}
}

// Start serves s on addr (default 127.0.0.1:0) and returns its base URL for
// the SDK's BaseEndpoint; stop shuts it down.
func (s *Server) Start(addr string) (baseURL string, stop func(), err error) {
	ln, baseURL, err := serve.Listen("sqs", addr)
	if err != nil {
		return "", nil, err
	}
	s.mu.Lock()
	s.baseURL = baseURL
	s.mu.Unlock()
	shutdown := serve.Serve(ln, s)
	// Close first: it ends the long polls Shutdown would otherwise wait for.
	return baseURL, sync.OnceFunc(func() { s.Close(); shutdown() }), nil
}

// Close ends every waiting long poll (they answer with no messages).
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.closed) }) }

// QueueURL is the URL of the named queue (whether or not it exists).
func (s *Server) QueueURL(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queueURLLocked(name)
}

func (s *Server) queueURLLocked(name string) string {
	return s.baseURL + "/" + s.account + "/" + name
}

// CreateQueue creates a queue (idempotent) and returns its URL.
func (s *Server) CreateQueue(name string, visibility time.Duration) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.createLocked(name, visibility)
	return s.queueURLLocked(name)
}

func (s *Server) createLocked(name string, visibility time.Duration) *queue {
	if q, ok := s.queues[name]; ok {
		return q
	}
	if visibility <= 0 {
		visibility = DefaultVisibilityTimeout
	}
	q := &queue{name: name, visibility: visibility, created: s.now(), wake: make(chan struct{})}
	s.queues[name] = q
	return q
}

// Send puts a message on the named queue (as SendMessage does).
func (s *Server) Send(name, body string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.queues[name]
	if !ok {
		return "", errNoQueue(name)
	}
	return s.sendLocked(q, body, 0).id, nil
}

func (s *Server) sendLocked(q *queue, body string, delay time.Duration) *message {
	s.seq++
	sum := md5.Sum([]byte(body))
	now := s.now()
	m := &message{id: uuid(), body: body, md5: hex.EncodeToString(sum[:]), sent: now, visibleAt: now.Add(delay)}
	q.msgs = append(q.msgs, m)
	s.duplicateLocked(q, m)
	close(q.wake)
	q.wake = make(chan struct{})
	return m
}

// Counts returns the visible and in-flight (received, not deleted, not yet
// visible again) messages of the named queue.
func (s *Server) Counts(name string) (visible, inFlight int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.queues[name]
	if !ok {
		return 0, 0
	}
	now := s.now()
	for _, m := range q.msgs {
		if m.visibleAt.After(now) {
			inFlight++
		} else {
			visible++
		}
	}
	return visible, inFlight
}

// apiError is an SQS error answer.
type apiError struct {
	status    int
	typ       string // e.g. QueueDoesNotExist
	queryCode string // e.g. AWS.SimpleQueueService.NonExistentQueue
	msg       string
}

func (e *apiError) Error() string { return e.typ + ": " + e.msg }

func errNoQueue(name string) *apiError {
	return &apiError{http.StatusBadRequest, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue",
		"The specified queue " + name + " does not exist."}
}

func invalidParam(format string, args ...interface{}) *apiError {
	return &apiError{http.StatusBadRequest, "InvalidParameterValue", "InvalidParameterValue", fmt.Sprintf(format, args...)}
}

// ServeHTTP answers one AWS JSON 1.0 request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, "AmazonSQS.")
	s.record(r, strings.TrimPrefix(target, "AmazonSQS."))
	if r.Method != http.MethodPost || !ok {
		writeError(w, &apiError{http.StatusBadRequest, "InvalidAction", "InvalidAction",
			fmt.Sprintf("this endpoint speaks the SQS AWS JSON protocol only (X-Amz-Target %q)", target)})
		return
	}
	if s.throttled(w, op) {
		return
	}
	if !s.authorize(w, r, op) {
		return
	}
	var in map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, &apiError{http.StatusBadRequest, "SerializationException", "SerializationException", "cannot decode the request body: " + err.Error()})
		return
	}
	var out interface{}
	var err error
	switch op {
	case "CreateQueue":
		out, err = s.opCreateQueue(in)
	case "GetQueueUrl":
		out, err = s.opGetQueueURL(in)
	case "ListQueues":
		out, err = s.opListQueues(in)
	case "SendMessage":
		out, err = s.opSendMessage(in)
	case "ReceiveMessage":
		out, err = s.opReceiveMessage(r.Context(), in)
	case "DeleteMessage":
		out, err = s.opDeleteMessage(in)
	case "GetQueueAttributes":
		out, err = s.opGetQueueAttributes(in)
	case "PurgeQueue":
		out, err = s.opPurgeQueue(in)
	default:
		err = &apiError{http.StatusBadRequest, "InvalidAction", "InvalidAction", "The action " + op + " is not valid for this endpoint."}
	}
	if err != nil {
		ae, ok := err.(*apiError)
		if !ok {
			ae = &apiError{http.StatusInternalServerError, "InternalError", "InternalError", err.Error()}
		}
		writeError(w, ae)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("x-amzn-RequestId", uuid())
	b, _ := json.Marshal(out)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("x-amzn-RequestId", uuid())
	w.Header().Set("x-amzn-query-error", e.queryCode+";Sender")
	w.WriteHeader(e.status)
	b, _ := json.Marshal(map[string]string{"__type": "com.amazonaws.sqs#" + e.typ, "message": e.msg})
	_, _ = w.Write(b)
}

func str(in map[string]json.RawMessage, key string) string {
	var v string
	_ = json.Unmarshal(in[key], &v)
	return v
}

func num(in map[string]json.RawMessage, key string) (int, bool, error) {
	raw, ok := in[key]
	if !ok || string(raw) == "null" {
		return 0, false, nil
	}
	var v int
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, true, invalidParam("%s must be an integer", key)
	}
	return v, true, nil
}

// queueOf resolves QueueUrl (any host; the last path segment is the name).
func (s *Server) queueOfLocked(in map[string]json.RawMessage) (*queue, error) {
	u := str(in, "QueueUrl")
	if u == "" {
		return nil, &apiError{http.StatusBadRequest, "MissingParameter", "MissingParameter", "The request must contain the parameter QueueUrl."}
	}
	name := u[strings.LastIndex(u, "/")+1:]
	q, ok := s.queues[name]
	if !ok {
		return nil, errNoQueue(name)
	}
	return q, nil
}

func (s *Server) opCreateQueue(in map[string]json.RawMessage) (interface{}, error) {
	name := str(in, "QueueName")
	if name == "" || len(name) > 80 || strings.ContainsAny(name, "/ :") {
		return nil, invalidParam("invalid queue name %q", name)
	}
	var attrs map[string]string
	_ = json.Unmarshal(in["Attributes"], &attrs)
	vis := time.Duration(0)
	if v, ok := attrs["VisibilityTimeout"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 43200 {
			return nil, invalidParam("VisibilityTimeout %q", v)
		}
		vis = time.Duration(n) * time.Second
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.createLocked(name, vis)
	return map[string]string{"QueueUrl": s.queueURLLocked(name)}, nil
}

func (s *Server) opGetQueueURL(in map[string]json.RawMessage) (interface{}, error) {
	name := str(in, "QueueName")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.queues[name]; !ok {
		return nil, errNoQueue(name)
	}
	return map[string]string{"QueueUrl": s.queueURLLocked(name)}, nil
}

func (s *Server) opListQueues(in map[string]json.RawMessage) (interface{}, error) {
	prefix := str(in, "QueueNamePrefix")
	s.mu.Lock()
	defer s.mu.Unlock()
	urls := []string{}
	for name := range s.queues {
		if strings.HasPrefix(name, prefix) {
			urls = append(urls, s.queueURLLocked(name))
		}
	}
	sort.Strings(urls)
	return map[string][]string{"QueueUrls": urls}, nil
}

func (s *Server) opSendMessage(in map[string]json.RawMessage) (interface{}, error) {
	body := str(in, "MessageBody")
	if body == "" {
		return nil, &apiError{http.StatusBadRequest, "MissingParameter", "MissingParameter", "The request must contain the parameter MessageBody."}
	}
	if len(body) > 256*1024 {
		return nil, invalidParam("message body is %d bytes, the limit is 262144", len(body))
	}
	delay, _, err := num(in, "DelaySeconds")
	if err != nil {
		return nil, err
	}
	if delay < 0 || delay > 900 {
		return nil, invalidParam("DelaySeconds %d", delay)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.queueOfLocked(in)
	if err != nil {
		return nil, err
	}
	m := s.sendLocked(q, body, time.Duration(delay)*time.Second)
	return map[string]string{"MessageId": m.id, "MD5OfMessageBody": m.md5}, nil
}

type messageJSON struct {
	MessageID     string            `json:"MessageId"`
	ReceiptHandle string            `json:"ReceiptHandle"`
	MD5OfBody     string            `json:"MD5OfBody"`
	Body          string            `json:"Body"`
	Attributes    map[string]string `json:"Attributes,omitempty"`
}

func (s *Server) opReceiveMessage(ctx context.Context, in map[string]json.RawMessage) (interface{}, error) {
	max, hasMax, err := num(in, "MaxNumberOfMessages")
	if err != nil {
		return nil, err
	}
	if !hasMax {
		max = 1
	}
	if max < 1 || max > 10 {
		return nil, invalidParam("Value %d for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10.", max)
	}
	wait, _, err := num(in, "WaitTimeSeconds")
	if err != nil {
		return nil, err
	}
	if wait < 0 || time.Duration(wait)*time.Second > MaxWaitTime {
		return nil, invalidParam("Value %d for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20.", wait)
	}
	vis, hasVis, err := num(in, "VisibilityTimeout")
	if err != nil {
		return nil, err
	}
	var names []string
	_ = json.Unmarshal(in["MessageSystemAttributeNames"], &names)
	var legacy []string
	_ = json.Unmarshal(in["AttributeNames"], &legacy)
	names = append(names, legacy...)
	deadline := time.NewTimer(time.Duration(wait) * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		q, err := s.queueOfLocked(in)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		visibility := q.visibility
		if hasVis {
			visibility = time.Duration(vis) * time.Second
		}
		now := s.now()
		var out []messageJSON
		next := time.Time{} // when the next in-flight message becomes visible again
		for _, m := range s.receiveOrderLocked(q) {
			if len(out) == max {
				break
			}
			if m.visibleAt.After(now) {
				if next.IsZero() || m.visibleAt.Before(next) {
					next = m.visibleAt
				}
				continue
			}
			m.receiveCount++
			if m.firstReceive.IsZero() {
				m.firstReceive = now
			}
			m.visibleAt = now.Add(visibility)
			m.handle = m.id + "#" + uuid()
			s.handles[m.handle] = m.id
			out = append(out, messageJSON{MessageID: m.id, ReceiptHandle: m.handle, MD5OfBody: m.md5, Body: m.body,
				Attributes: systemAttributes(m, names)})
		}
		wake := q.wake
		s.mu.Unlock()
		if len(out) > 0 {
			return map[string][]messageJSON{"Messages": out}, nil
		}
		var again <-chan time.Time
		if !next.IsZero() {
			t := time.NewTimer(time.Until(next))
			defer t.Stop()
			again = t.C
		}
		select {
		case <-wake:
		case <-again:
		case <-deadline.C:
			return map[string][]messageJSON{"Messages": {}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.closed:
			return map[string][]messageJSON{"Messages": {}}, nil
		}
	}
}

func systemAttributes(m *message, names []string) map[string]string {
	all := map[string]string{
		"ApproximateReceiveCount":          strconv.Itoa(m.receiveCount),
		"SentTimestamp":                    strconv.FormatInt(m.sent.UnixMilli(), 10),
		"ApproximateFirstReceiveTimestamp": strconv.FormatInt(m.firstReceive.UnixMilli(), 10),
		"SenderId":                         "AIDAJOINERYLOCAL",
	}
	out := map[string]string{}
	for _, n := range names {
		if n == "All" {
			return all
		}
		if v, ok := all[n]; ok {
			out[n] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (s *Server) opDeleteMessage(in map[string]json.RawMessage) (interface{}, error) {
	h := str(in, "ReceiptHandle")
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.queueOfLocked(in)
	if err != nil {
		return nil, err
	}
	id, ok := s.handles[h]
	if !ok {
		return nil, &apiError{http.StatusBadRequest, "ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid",
			fmt.Sprintf("The input receipt handle %q is not a valid receipt handle.", h)}
	}
	for i, m := range q.msgs {
		// As on SQS, only the latest receipt handle deletes; an older one
		// succeeds without effect.
		if m.id == id && m.handle == h {
			q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
			break
		}
	}
	return map[string]string{}, nil
}

func (s *Server) opGetQueueAttributes(in map[string]json.RawMessage) (interface{}, error) {
	s.mu.Lock()
	q, err := s.queueOfLocked(in)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	name, vis := q.name, q.visibility
	s.mu.Unlock()
	visible, inFlight := s.Counts(name)
	return map[string]map[string]string{"Attributes": {
		"ApproximateNumberOfMessages":           strconv.Itoa(visible),
		"ApproximateNumberOfMessagesNotVisible": strconv.Itoa(inFlight),
		"VisibilityTimeout":                     strconv.Itoa(int(vis / time.Second)),
		"QueueArn":                              fmt.Sprintf("arn:aws:sqs:%s:%s:%s", s.region, s.account, name),
	}}, nil
}

func (s *Server) opPurgeQueue(in map[string]json.RawMessage) (interface{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.queueOfLocked(in)
	if err != nil {
		return nil, err
	}
	q.msgs = nil
	return map[string]string{}, nil
}

func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
