package provider

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

func writeTree(t *testing.T, dir string, files map[string]string, mtime time.Time, mode os.FileMode) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

var sampleTree = map[string]string{
	"handler.py":        "def handle(event, context):\n    return {'ok': True}\n",
	"requirements.txt":  "",
	"lib/util.py":       "X = 1\n",
	"lib/b/deep.py":     "Y = 2\n",
	"a.txt":             "first in order\n",
	"__pycache__/x.pyc": "cache",
	".git/HEAD":         "ref: refs/heads/main\n",
	"lib/util.pyc":      "cache",
}

func TestZipDirDeterministicAcrossMtimesAndModes(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeTree(t, a, sampleTree, time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC), 0o600)
	writeTree(t, b, sampleTree, time.Now(), 0o755)
	za, err := ZipDir(a)
	if err != nil {
		t.Fatal(err)
	}
	zb, err := ZipDir(b)
	if err != nil {
		t.Fatal(err)
	}
	if SHA256Hex(za) != SHA256Hex(zb) {
		t.Fatalf("same tree, different sha256: %s vs %s", SHA256Hex(za), SHA256Hex(zb))
	}
	// runs again: same bytes
	za2, _ := ZipDir(a)
	if !bytes.Equal(za, za2) {
		t.Fatal("two runs over the same directory gave different archives")
	}
	// touching a file changes nothing
	now := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(a, "handler.py"), now, now); err != nil {
		t.Fatal(err)
	}
	za3, _ := ZipDir(a)
	if SHA256Hex(za3) != SHA256Hex(za) {
		t.Fatal("a new mtime changed the archive")
	}
}

func TestZipDirEntriesSortedFixedAndFiltered(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, sampleTree, time.Now(), 0o640)
	data, err := ZipDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range r.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(zipEpoch) && f.Modified.Format("2006-01-02 15:04:05") != "1980-01-01 00:00:00" {
			t.Errorf("%s: modified %s, want 1980-01-01", f.Name, f.Modified)
		}
		if f.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", f.Name, f.Mode())
		}
		if len(f.Extra) != 0 || f.Comment != "" {
			t.Errorf("%s: has extra fields or a comment", f.Name)
		}
	}
	want := []string{"a.txt", "handler.py", "lib/b/deep.py", "lib/util.py", "requirements.txt"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("entries %v, want %v", names, want)
	}
}

func TestZipDirContentChangeChangesSHA(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, sampleTree, time.Now(), 0o644)
	before, _ := ZipDir(dir)
	writeTree(t, dir, map[string]string{"handler.py": "def handle(e, c):\n    return 2\n"}, time.Now(), 0o644)
	after, _ := ZipDir(dir)
	if SHA256Hex(before) == SHA256Hex(after) {
		t.Fatal("changed code, same sha256")
	}
}

func TestZipDirRefusesSymlinksAndEmpty(t *testing.T) {
	dir := t.TempDir()
	if _, err := ZipDir(dir); err == nil {
		t.Fatal("an empty directory was packed")
	}
	writeTree(t, dir, map[string]string{"handler.py": "x"}, time.Now(), 0o644)
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := ZipDir(dir); err == nil || !strings.Contains(err.Error(), "link") {
		t.Fatalf("a symlink was packed (err %v)", err)
	}
	if _, err := ZipDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing directory was packed")
	}
}

func TestLoadCodeZipFileAsIs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "code.zip")
	if err := os.WriteFile(p, []byte("PK-not-really"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := LoadCode("", p)
	if err != nil || string(data) != "PK-not-really" {
		t.Fatalf("zip_file not read as is: %q %v", data, err)
	}
	if _, err := LoadCode(dir, p); err == nil {
		t.Fatal("both source_dir and zip_file accepted")
	}
	if _, err := LoadCode("", ""); err == nil {
		t.Fatal("neither source_dir nor zip_file accepted")
	}
}

// The provider's schemas pass the framework's own checks (GetProviderSchema validates
// every resource and data source schema and reports their diagnostics).
func TestProviderSchemaValid(t *testing.T) {
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("schema diagnostic: %s: %s", d.Summary, d.Detail)
	}
	for _, name := range []string{"sless_function", "sless_trigger", "sless_job"} {
		if _, ok := resp.ResourceSchemas[name]; !ok {
			t.Errorf("resource %s missing", name)
		}
	}
	for _, name := range []string{"sless_function", "sless_functions", "sless_whoami"} {
		if _, ok := resp.DataSourceSchemas[name]; !ok {
			t.Errorf("data source %s missing", name)
		}
	}
	token := attrOf(resp.Provider, "token")
	if token == nil || !token.Sensitive || !token.Optional {
		t.Error("provider token must be optional and sensitive")
	}
	fn := resp.ResourceSchemas["sless_function"]
	for _, name := range []string{"name", "runtime", "entrypoint", "env", "sensitive_env", "memory_mb", "cpu_millis",
		"timeout_s", "concurrency", "min_instances", "max_instances", "egress", "auth", "callback_url", "callback_secret", "secrets", "source_dir", "zip_file",
		"build_timeout_sec", "wait_timeout_sec", "sha256", "phase", "url", "validation_verdict"} {
		if attrOf(fn, name) == nil {
			t.Errorf("sless_function.%s missing", name)
		}
	}
	for _, computed := range []string{"sha256", "phase", "url", "validation_verdict"} {
		if a := attrOf(fn, computed); a != nil && (!a.Computed || a.Optional) {
			t.Errorf("sless_function.%s must be computed only", computed)
		}
	}
	if a := attrOf(fn, "sensitive_env"); a == nil || !a.Sensitive {
		t.Error("sless_function.sensitive_env must be sensitive")
	}
	trig := resp.ResourceSchemas["sless_trigger"]
	for _, name := range []string{"type", "function", "enabled", "schedule", "timezone", "payload", "prewarm_s", "url_secret", "queue", "exchange", "routing_key", "prefetch", "max_attempts"} {
		if attrOf(trig, name) == nil {
			t.Errorf("sless_trigger.%s missing", name)
		}
	}
	job := resp.ResourceSchemas["sless_job"]
	for _, name := range []string{"function", "payload", "run_id", "phase", "result"} {
		if attrOf(job, name) == nil {
			t.Errorf("sless_job.%s missing", name)
		}
	}
}

func attrOf(s *tfprotov6.Schema, name string) *tfprotov6.SchemaAttribute {
	if s == nil || s.Block == nil {
		return nil
	}
	for _, a := range s.Block.Attributes {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Each resource and data source answers the framework's implementation checks.
func TestSchemasValidateImplementation(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	for _, f := range p.Resources(ctx) {
		r := f()
		var sresp resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sresp)
		if diags := sresp.Schema.ValidateImplementation(ctx); diags.HasError() {
			t.Errorf("%T: %v", r, diags)
		}
	}
	for _, f := range p.DataSources(ctx) {
		d := f()
		var sresp datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &sresp)
		if diags := sresp.Schema.ValidateImplementation(ctx); diags.HasError() {
			t.Errorf("%T: %v", d, diags)
		}
	}
	var presp fwprovider.SchemaResponse
	p.Schema(ctx, fwprovider.SchemaRequest{}, &presp)
	if diags := presp.Schema.ValidateImplementation(ctx); diags.HasError() {
		t.Errorf("provider: %v", diags)
	}
}

func TestValidateTriggerByType(t *testing.T) {
	base := func(typ string) *triggerModel {
		return &triggerModel{
			Type: types.StringValue(typ), Function: types.StringValue("f"), Enabled: types.BoolValue(true),
			Schedule: types.StringNull(), Timezone: types.StringNull(), Payload: types.StringNull(), PrewarmS: types.Float64Null(),
			URLSecret: types.StringNull(), Queue: types.StringNull(), Exchange: types.StringNull(), RoutingKey: types.StringNull(),
			Prefetch: types.Int64Null(), MaxAttempts: types.Int64Null(),
		}
	}
	if d := validateTrigger(base("http")); d.HasError() {
		t.Errorf("plain http trigger refused: %v", d)
	}
	cron := base("cron")
	if d := validateTrigger(cron); !d.HasError() {
		t.Error("cron trigger without schedule accepted")
	}
	cron.Schedule = types.StringValue("*/5 * * * *")
	cron.PrewarmS = types.Float64Value(10)
	if d := validateTrigger(cron); d.HasError() {
		t.Errorf("cron trigger refused: %v", d)
	}
	cron.Queue = types.StringValue("q")
	if d := validateTrigger(cron); !d.HasError() {
		t.Error("cron trigger with a rabbitmq attribute accepted")
	}
	httpT := base("http")
	httpT.Schedule = types.StringValue("* * * * *")
	if d := validateTrigger(httpT); !d.HasError() {
		t.Error("http trigger with a schedule accepted")
	}
	rabbit := base("rabbitmq")
	if d := validateTrigger(rabbit); !d.HasError() {
		t.Error("rabbitmq trigger without url_secret and queue accepted")
	}
	rabbit.URLSecret = types.StringValue("amqp://u:p@h/")
	rabbit.Queue = types.StringValue("q")
	if d := validateTrigger(rabbit); d.HasError() {
		t.Errorf("rabbitmq trigger refused: %v", d)
	}
	rabbit.Exchange = types.StringValue("x")
	if d := validateTrigger(rabbit); !d.HasError() {
		t.Error("rabbitmq trigger with queue and exchange accepted")
	}
}

func TestTriggerBodyAndReadBack(t *testing.T) {
	m := &triggerModel{
		Name: types.StringValue("tick"), Type: types.StringValue("cron"), Function: types.StringValue("f"),
		Enabled: types.BoolValue(false), Schedule: types.StringValue("0 * * * *"), Timezone: types.StringUnknown(),
		Payload: types.StringValue(`{"b": 1, "a": [1, 2]}`), PrewarmS: types.Float64Value(30),
		URLSecret: types.StringNull(), Queue: types.StringNull(), Exchange: types.StringNull(), RoutingKey: types.StringNull(),
		Prefetch: types.Int64Unknown(), MaxAttempts: types.Int64Unknown(),
	}
	body, err := triggerBody(m)
	if err != nil {
		t.Fatal(err)
	}
	if body.Type != "cron" || *body.Enabled || *body.Schedule != "0 * * * *" || body.Timezone != nil || *body.PrewarmS != 30 || body.Prefetch != nil {
		t.Fatalf("unexpected body %+v", body)
	}
	// the gateway answers with its defaults filled in and the payload re-encoded
	tz := "UTC"
	enabled := false
	view := &TriggerView{Spec: &Trigger{Type: "cron", Function: "f", Enabled: &enabled, Schedule: body.Schedule,
		Timezone: &tz, PrewarmS: body.PrewarmS, Payload: map[string]any{"a": []any{1.0, 2.0}, "b": 1.0}}}
	applyTrigger(m, "tick", view)
	if m.Timezone.ValueString() != "UTC" {
		t.Errorf("timezone %v, want the gateway's UTC", m.Timezone)
	}
	if m.Payload.ValueString() != `{"b": 1, "a": [1, 2]}` {
		t.Errorf("an equal payload was rewritten: %s", m.Payload.ValueString())
	}
	if !m.Prefetch.IsNull() || !m.MaxAttempts.IsNull() {
		t.Error("rabbitmq attributes of a cron trigger must read back null")
	}
	// a payload changed outside Terraform is drift
	view.Spec.Payload = map[string]any{"b": 2.0}
	applyTrigger(m, "tick", view)
	if m.Payload.ValueString() != `{"b":2}` {
		t.Errorf("payload drift not read: %s", m.Payload.ValueString())
	}
	// a top-level (not under "spec") answer works too
	flat := &TriggerView{Trigger: Trigger{Type: "cron", Function: "g", Enabled: &enabled}}
	applyTrigger(m, "tick", flat)
	if m.Function.ValueString() != "g" {
		t.Errorf("function %v, want g", m.Function)
	}
}

func TestPlanJob(t *testing.T) {
	state := &jobModel{RunID: types.Int64Value(2), Phase: types.StringValue("Succeeded"),
		Message: types.StringValue(""), Result: types.StringValue(`{"ok":true}`)}
	same := &jobModel{RunID: types.Int64Value(2), Phase: types.StringUnknown(), Message: types.StringUnknown(), Result: types.StringUnknown()}
	if d := planJob(same, state); d.HasError() || same.Phase.ValueString() != "Succeeded" || same.Result.ValueString() != `{"ok":true}` {
		t.Errorf("same run_id must keep the status: %v %+v", d, same)
	}
	raised := &jobModel{RunID: types.Int64Value(3)}
	if d := planJob(raised, state); d.HasError() || !raised.Phase.IsUnknown() || !raised.Result.IsUnknown() {
		t.Errorf("a raised run_id must plan a new status: %v %+v", d, raised)
	}
	lowered := &jobModel{RunID: types.Int64Value(1)}
	if d := planJob(lowered, state); !d.HasError() {
		t.Error("a lowered run_id was accepted")
	}
}

func TestApplyJobView(t *testing.T) {
	m := &jobModel{Payload: types.StringValue(`{"n": 1}`), WaitForCompletion: types.BoolNull(), WaitTimeoutSec: types.Int64Null()}
	applyJob(m, "j", &JobView{Job: Job{Function: "f", RunID: 4, Payload: map[string]any{"n": 1}},
		Status: JobStatus{Phase: "Succeeded", Result: map[string]any{"sum": 3}}})
	if m.Result.ValueString() != `{"sum":3}` {
		t.Fatalf("result %s", m.Result.ValueString())
	}
	// the gateway may give the result as JSON text: kept as is
	applyJob(m, "j", &JobView{Spec: &Job{Function: "f", RunID: 5}, Status: JobStatus{Phase: "Failed", Error: "boom", Result: `{"sum": 4}`}})
	if m.Result.ValueString() != `{"sum": 4}` || m.Message.ValueString() != "boom" || m.RunID.ValueInt64() != 5 {
		t.Fatalf("unexpected model %+v", m)
	}
	m.RunID, m.Payload = types.Int64Value(4), types.StringValue(`{"n": 1}`)
	applyJob(m, "j", &JobView{Job: Job{Function: "f", RunID: 4, Payload: map[string]any{"n": 1}},
		Status: JobStatus{Phase: "Succeeded", Result: map[string]any{"sum": 3}}})
	if m.RunID.ValueInt64() != 4 || m.Phase.ValueString() != "Succeeded" || m.Result.ValueString() != `{"sum":3}` ||
		m.Payload.ValueString() != `{"n": 1}` || !m.WaitForCompletion.ValueBool() || m.WaitTimeoutSec.ValueInt64() != 600 {
		t.Fatalf("unexpected model %+v", m)
	}
}

func TestJobStatusDone(t *testing.T) {
	prev := int64(1)
	if (JobStatus{Phase: "Succeeded", RunID: &prev}).Done(2) {
		t.Error("the previous run's Succeeded was taken for the new run's")
	}
	if !(JobStatus{Phase: "Failed", RunID: &prev}).Done(1) || (JobStatus{Phase: "Running"}).Done(1) {
		t.Error("Done is wrong")
	}
}

func TestAPIErrors(t *testing.T) {
	err := decodeError(404, []byte(`{"error": {"code": "not_found", "message": "Not Found"}}`))
	if !IsNotFound(err) || !IsRouteNotFound(err) {
		t.Error("a route 404 is not recognised")
	}
	err = decodeError(404, []byte(`{"error": {"code": "not_found", "message": "trigger tick not found"}}`))
	if !IsNotFound(err) || IsRouteNotFound(err) {
		t.Error("an object 404 is taken for a missing route")
	}
	err = decodeError(422, []byte(`{"error": {"code": "validation_rejected", "message": "the upload was rejected by validation (1 findings)",
		"details": {"verdict": "reject", "findings": [{"rule": "archive.path-traversal", "file": "../evil", "line": null, "message": "path escapes", "source": "archive"}]}}}`))
	report, ok := RejectedReport(err)
	if !ok || report.Verdict != "reject" || len(report.Findings) != 1 {
		t.Fatalf("report not parsed: %+v", report)
	}
	text := FormatFindings(*report)
	for _, want := range []string{"verdict: reject", "../evil", "archive.path-traversal", "path escapes"} {
		if !strings.Contains(text, want) {
			t.Errorf("findings text %q lacks %q", text, want)
		}
	}
	if !strings.Contains(err.Error(), "validation_rejected") {
		t.Errorf("error text %q lacks the code", err)
	}
	plain := decodeError(502, []byte("<html>bad gateway</html>"))
	var apiErr *APIError
	if !errors.As(plain, &apiErr) || !strings.Contains(apiErr.Message, "bad gateway") {
		t.Errorf("a non-JSON error lost its text: %v", plain)
	}
}

func TestJSONAttrFromRemote(t *testing.T) {
	prior := types.StringValue("{\n  \"a\": 1\n}")
	if got := jsonAttrFromRemote(prior, map[string]any{"a": 1}); got.ValueString() != prior.ValueString() {
		t.Errorf("equal JSON rewritten: %s", got.ValueString())
	}
	if got := jsonAttrFromRemote(types.StringNull(), nil); !got.IsNull() {
		t.Errorf("null payload read as %v", got)
	}
}
