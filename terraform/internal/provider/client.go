package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client talks to the sless HTTP API as one tenant. Namespace comes from GET /v1/whoami.
type Client struct {
	Endpoint  string
	Token     string
	Namespace string
	Tenant    string
	HTTP      *http.Client
	UserAgent string
}

// APIError is an error answer of the API: {"error": {"code", "message", "details"}}.
type APIError struct {
	Status  int
	Code    string
	Message string
	Details json.RawMessage
}

func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// IsNotFound reports whether err is a 404 answer of the API.
func IsNotFound(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound
}

// IsPreconditionFailed reports whether err is a 412: an If-Match named a stale version.
func IsPreconditionFailed(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusPreconditionFailed
}

// IsRouteNotFound reports whether err is the gateway's answer for a path it has no route
// for (Starlette's "Not Found"), as opposed to a missing object ("function x not found").
func IsRouteNotFound(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound &&
		apiErr.Code == "not_found" && apiErr.Message == "Not Found"
}

// NewClient returns a client; call Whoami to learn the namespace.
func NewClient(endpoint, token, userAgent string) *Client {
	return &Client{
		Endpoint:  strings.TrimRight(endpoint, "/"),
		Token:     token,
		HTTP:      &http.Client{Timeout: 5 * time.Minute},
		UserAgent: userAgent,
	}
}

func (c *Client) do(ctx context.Context, method, path, contentType string, body []byte, out any) (int, error) {
	return c.doWith(ctx, method, path, contentType, body, out, nil)
}

// doWith is do with extra request headers (If-Match).
func (c *Client) doWith(ctx context.Context, method, path, contentType string, body []byte, out any, headers map[string]string) (int, error) {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Endpoint+path, reader)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", "application/json")
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode >= 400 {
		return resp.StatusCode, decodeError(resp.StatusCode, data)
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: unexpected answer (HTTP %d): %w", method, path, resp.StatusCode, err)
		}
	}
	return resp.StatusCode, nil
}

func decodeError(status int, data []byte) error {
	var body struct {
		Error struct {
			Code    string          `json:"code"`
			Message string          `json:"message"`
			Details json.RawMessage `json:"details"`
		} `json:"error"`
		Detail any `json:"detail"`
	}
	if err := json.Unmarshal(data, &body); err == nil && (body.Error.Code != "" || body.Error.Message != "") {
		return &APIError{Status: status, Code: body.Error.Code, Message: body.Error.Message, Details: body.Error.Details}
	}
	msg := strings.TrimSpace(string(data))
	if len(msg) > 500 {
		msg = msg[:500] + "..."
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &APIError{Status: status, Message: msg}
}

func (c *Client) nsPath(kind, name string) string {
	p := "/v1/namespaces/" + url.PathEscape(c.Namespace) + "/" + kind
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// Whoami is GET /v1/whoami.
type Whoami struct {
	Tenant    *string `json:"tenant"`
	Namespace *string `json:"namespace"`
	Admin     bool    `json:"admin"`
}

func (c *Client) Whoami(ctx context.Context) (*Whoami, error) {
	var w Whoami
	if _, err := c.do(ctx, http.MethodGet, "/v1/whoami", "", nil, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// FunctionSpec is the body of PUT .../functions/{name}.
type FunctionSpec struct {
	Runtime    string `json:"runtime,omitempty"`
	Entrypoint string `json:"entrypoint,omitempty"`
	Interface  string `json:"interface,omitempty"`
	// PayloadFormatVersion is sent only when set (lambda only)
	PayloadFormatVersion *string           `json:"payload_format_version,omitempty"`
	Env                  map[string]string `json:"env"`
	MemoryMB             *int64            `json:"memory_mb,omitempty"`
	CPUMillis            *int64            `json:"cpu_millis,omitempty"`
	TimeoutS             *float64          `json:"timeout_s,omitempty"`
	Concurrency          *int64            `json:"concurrency,omitempty"`
	MinInstances         *int64            `json:"min_instances,omitempty"`
	MaxInstances         *int64            `json:"max_instances,omitempty"`
	Egress               []string          `json:"egress"`
	Auth                 string            `json:"auth,omitempty"`
	// CallbackURL and CallbackSecret are sent as null when unset (no callback)
	CallbackURL    *string `json:"callback_url"`
	CallbackSecret *string `json:"callback_secret"`
	// Secrets are always sent (an empty list clears them)
	Secrets []SecretRef `json:"secrets"`
	// Traffic is always sent (an empty list: every call to the current version)
	Traffic []TrafficTarget `json:"traffic"`
}

// TrafficTarget is a share of a function's calls that goes to one of its versions.
type TrafficTarget struct {
	Version string `json:"version"`
	Percent int64  `json:"percent"`
}

// SecretRef names a secret of the namespace and the environment variable it becomes.
type SecretRef struct {
	Name string `json:"name"`
	Env  string `json:"env"`
}

// FunctionCode is spec.code as the API shows it.
type FunctionCode struct {
	SHA256  string `json:"sha256"`
	Size    int64  `json:"size"`
	Version string `json:"version"`
}

// FunctionSpecView is spec as the API returns it (all defaults filled in).
type FunctionSpecView struct {
	Runtime              string            `json:"runtime"`
	Entrypoint           string            `json:"entrypoint"`
	Interface            string            `json:"interface"`
	PayloadFormatVersion *string           `json:"payload_format_version"`
	Env                  map[string]string `json:"env"`
	MemoryMB             int64             `json:"memory_mb"`
	CPUMillis            int64             `json:"cpu_millis"`
	TimeoutS             float64           `json:"timeout_s"`
	Concurrency          int64             `json:"concurrency"`
	MinInstances         int64             `json:"min_instances"`
	MaxInstances         int64             `json:"max_instances"`
	Egress               []string          `json:"egress"`
	Auth                 string            `json:"auth"`
	CallbackURL          *string           `json:"callback_url"`
	CallbackSecret       *string           `json:"callback_secret"`
	Secrets              []SecretRef       `json:"secrets"`
	Traffic              []TrafficTarget   `json:"traffic"`
	Code                 *FunctionCode     `json:"code"`
}

// FunctionStatus is status as the API returns it.
type FunctionStatus struct {
	Phase          string          `json:"phase"`
	Message        string          `json:"message"`
	Validation     json.RawMessage `json:"validation"`
	ObservedSHA256 *string         `json:"observed_sha256"`
}

// Verdict returns status.validation.verdict, or "".
func (s FunctionStatus) Verdict() string {
	var v struct {
		Verdict string `json:"verdict"`
	}
	if len(s.Validation) > 0 {
		_ = json.Unmarshal(s.Validation, &v)
	}
	return v.Verdict
}

// Function is one function as the API returns it.
type Function struct {
	Name      string           `json:"name"`
	Namespace string           `json:"namespace"`
	Spec      FunctionSpecView `json:"spec"`
	Status    FunctionStatus   `json:"status"`
	URL       string           `json:"url"`
	// Version is the current version (v1, v2, ...; "" before the first upload).
	Version string `json:"version"`
	// ResourceVersion changes on every write of the function; sent back as If-Match.
	ResourceVersion string `json:"resource_version"`
}

// ETag is the function's resource_version as an entity tag ("" when unknown).
func (f *Function) ETag() string {
	if f.ResourceVersion == "" {
		return ""
	}
	return `"` + f.ResourceVersion + `"`
}

// PutFunction is PUT .../functions/{name}; with ifMatch (an ETag), only if the function
// is still at that version (else an APIError with Status 412).
func (c *Client) PutFunction(ctx context.Context, name string, spec FunctionSpec, ifMatch string) (*Function, error) {
	if spec.Secrets == nil {
		spec.Secrets = []SecretRef{} // a nil slice would go out as null, which the API refuses
	}
	if spec.Traffic == nil {
		spec.Traffic = []TrafficTarget{}
	}
	body, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var headers map[string]string
	if ifMatch != "" {
		headers = map[string]string{"If-Match": ifMatch}
	}
	var f Function
	if _, err := c.doWith(ctx, http.MethodPut, c.nsPath("functions", name), "application/json", body, &f, headers); err != nil {
		return nil, err
	}
	return &f, nil
}

// ListFunctionNames walks every page of GET .../functions (the cursor) and returns the
// names in order.
func (c *Client) ListFunctionNames(ctx context.Context) ([]string, error) {
	var names []string
	cursor := ""
	for {
		q := url.Values{"limit": {"1000"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page struct {
			Functions []struct {
				Name string `json:"name"`
			} `json:"functions"`
			NextCursor *string `json:"next_cursor"`
		}
		if _, err := c.do(ctx, http.MethodGet, c.nsPath("functions", "")+"?"+q.Encode(), "", nil, &page); err != nil {
			return nil, err
		}
		for _, f := range page.Functions {
			names = append(names, f.Name)
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return names, nil
		}
		cursor = *page.NextCursor
	}
}

func (c *Client) GetFunction(ctx context.Context, name string) (*Function, error) {
	var f Function
	if _, err := c.do(ctx, http.MethodGet, c.nsPath("functions", name), "", nil, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

func (c *Client) DeleteFunction(ctx context.Context, name string) error {
	_, err := c.do(ctx, http.MethodDelete, c.nsPath("functions", name), "", nil, nil)
	return err
}

// UploadResult is the 202 answer of an upload.
type UploadResult struct {
	SHA256    string `json:"sha256"`
	Phase     string `json:"phase"`
	Verdict   string `json:"verdict"`
	Unchanged bool   `json:"unchanged"`
}

func (c *Client) Upload(ctx context.Context, name string, zip []byte) (*UploadResult, error) {
	return c.UploadWithTraffic(ctx, name, zip, -1)
}

// UploadWithTraffic uploads the code as a new version that gets percent % of the calls
// (the previous version the rest); a negative percent: every call.
func (c *Client) UploadWithTraffic(ctx context.Context, name string, zip []byte, percent int) (*UploadResult, error) {
	var r UploadResult
	path := c.nsPath("functions", name) + "/upload"
	if percent >= 0 {
		path += fmt.Sprintf("?traffic=%d", percent)
	}
	if _, err := c.do(ctx, http.MethodPost, path, "application/zip", zip, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Finding is one finding of a validation report.
type Finding struct {
	Rule    string `json:"rule"`
	File    string `json:"file"`
	Line    *int   `json:"line"`
	Message string `json:"message"`
	Source  string `json:"source"`
}

// Report is a validation report (the details of a validation_rejected error).
type Report struct {
	Verdict  string    `json:"verdict"`
	Findings []Finding `json:"findings"`
}

// FormatFindings renders a report's findings for a diagnostic, one a line.
func FormatFindings(r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: %s\n", r.Verdict)
	for _, f := range r.Findings {
		loc := f.File
		if f.Line != nil {
			loc = fmt.Sprintf("%s:%d", f.File, *f.Line)
		}
		if loc == "" {
			loc = "(archive)"
		}
		fmt.Fprintf(&b, "  - [%s] %s %s: %s\n", f.Source, loc, f.Rule, f.Message)
	}
	return strings.TrimRight(b.String(), "\n")
}

// RejectedReport returns the validation report if err is a validation_rejected answer.
func RejectedReport(err error) (*Report, bool) {
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "validation_rejected" {
		return nil, false
	}
	var r Report
	if len(apiErr.Details) > 0 {
		_ = json.Unmarshal(apiErr.Details, &r)
	}
	return &r, true
}

// Trigger is the body and answer of .../triggers/{name}. Fields the provider does not
// model are kept in Extra so that they round-trip.
type Trigger struct {
	Type        string   `json:"type"`
	Function    string   `json:"function"`
	Enabled     *bool    `json:"enabled,omitempty"`
	Schedule    *string  `json:"schedule,omitempty"`
	Timezone    *string  `json:"timezone,omitempty"`
	Payload     any      `json:"payload,omitempty"`
	PrewarmS    *float64 `json:"prewarm_s,omitempty"`
	URLSecret   *string  `json:"url_secret,omitempty"`
	Queue       *string  `json:"queue,omitempty"`
	Exchange    *string  `json:"exchange,omitempty"`
	RoutingKey  *string  `json:"routing_key,omitempty"`
	Prefetch    *int64   `json:"prefetch,omitempty"`
	MaxAttempts *int64   `json:"max_attempts,omitempty"`
}

// TriggerView is a trigger as the API returns it: either the spec at the top level or
// {"name", "namespace", "spec": {...}, "status": {...}} like functions.
type TriggerView struct {
	Trigger
	Spec   *Trigger        `json:"spec"`
	Status json.RawMessage `json:"status"`
}

// Effective returns the spec, wherever the answer put it.
func (v TriggerView) Effective() Trigger {
	if v.Spec != nil && v.Spec.Type != "" {
		return *v.Spec
	}
	return v.Trigger
}

func (c *Client) PutTrigger(ctx context.Context, name string, t Trigger) (*TriggerView, error) {
	body, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var v TriggerView
	if _, err := c.do(ctx, http.MethodPut, c.nsPath("triggers", name), "application/json", body, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

func (c *Client) GetTrigger(ctx context.Context, name string) (*TriggerView, error) {
	var v TriggerView
	if _, err := c.do(ctx, http.MethodGet, c.nsPath("triggers", name), "", nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

func (c *Client) DeleteTrigger(ctx context.Context, name string) error {
	_, err := c.do(ctx, http.MethodDelete, c.nsPath("triggers", name), "", nil, nil)
	return err
}

// Job is the body of PUT .../jobs/{name}.
type Job struct {
	Function string `json:"function"`
	RunID    int64  `json:"run_id"`
	Payload  any    `json:"payload"`
}

// JobStatus is a job's status.
type JobStatus struct {
	Phase   string `json:"phase"`
	Message string `json:"message"`
	Error   string `json:"error"`
	// Result is the run's result: JSON text (a string), or a JSON value
	Result any    `json:"result"`
	RunID  *int64 `json:"run_id"`
}

// Done reports whether the run runID has finished (Succeeded or Failed).
func (s JobStatus) Done(runID int64) bool {
	if s.Phase != "Succeeded" && s.Phase != "Failed" {
		return false
	}
	return s.RunID == nil || *s.RunID == runID
}

// Text is the status message, or the error when there is no message.
func (s JobStatus) Text() string {
	if s.Message != "" {
		return s.Message
	}
	return s.Error
}

// ResultJSON is the result as JSON text ("" when there is none).
func (s JobStatus) ResultJSON() string {
	switch r := s.Result.(type) {
	case nil:
		return ""
	case string:
		return r
	default:
		raw, err := json.Marshal(r)
		if err != nil {
			return ""
		}
		return string(raw)
	}
}

// JobView is a job as the API returns it: the spec at the top level or under "spec".
type JobView struct {
	Job
	Spec   *Job      `json:"spec"`
	Status JobStatus `json:"status"`
}

// Effective returns the spec, wherever the answer put it.
func (v JobView) Effective() Job {
	if v.Spec != nil && v.Spec.Function != "" {
		return *v.Spec
	}
	return v.Job
}

func (c *Client) PutJob(ctx context.Context, name string, j Job) (*JobView, error) {
	body, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	var v JobView
	if _, err := c.do(ctx, http.MethodPut, c.nsPath("jobs", name), "application/json", body, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

func (c *Client) GetJob(ctx context.Context, name string) (*JobView, error) {
	var v JobView
	if _, err := c.do(ctx, http.MethodGet, c.nsPath("jobs", name), "", nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

func (c *Client) DeleteJob(ctx context.Context, name string) error {
	_, err := c.do(ctx, http.MethodDelete, c.nsPath("jobs", name), "", nil, nil)
	return err
}
