package provider

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

var protoV6Providers = map[string]func() (tfprotov6.ProviderServer, error){
	"sless": providerserver.NewProtocol6WithError(New("acc")()),
}

const providerBlock = `
terraform {
  required_providers {
    sless = { source = "sless/sless" }
  }
}
provider "sless" {}
`

func pyHandler(greeting string) string {
	return fmt.Sprintf("def handle(event, context):\n    return {\"message\": %q, \"function\": context.function}\n", greeting)
}

func codeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files, time.Now(), 0o644)
	return dir
}

func uniqueName(prefix string) string { return prefix + "-" + randomHex(3) }

func invoke(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), nil
}

// checkInvoke calls the function's URL and expects the body to contain want.
func checkInvoke(address, want string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[address]
		if !ok {
			return fmt.Errorf("%s not in state", address)
		}
		url := rs.Primary.Attributes["url"]
		var last string
		for i := 0; i < 20; i++ {
			status, body, err := invoke(url)
			if err == nil && status == 200 && strings.Contains(body, want) {
				return nil
			}
			last = fmt.Sprintf("HTTP %d %s %v", status, body, err)
			time.Sleep(500 * time.Millisecond)
		}
		return fmt.Errorf("GET %s: want %q, got %s", url, want, last)
	}
}

func checkRemote(name string, check func(*Function) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		f, err := acc.client.GetFunction(context.Background(), name)
		if err != nil {
			return err
		}
		return check(f)
	}
}

func checkFunctionsGone(s *terraform.State) error {
	for _, rs := range s.RootModule().Resources {
		if rs.Type != "sless_function" {
			continue
		}
		_, err := acc.client.GetFunction(context.Background(), rs.Primary.ID)
		if err == nil {
			return fmt.Errorf("function %s still exists after destroy", rs.Primary.ID)
		}
		if !IsNotFound(err) {
			return err
		}
	}
	return nil
}

func functionConfig(name, dir, extra string) string {
	return providerBlock + fmt.Sprintf(`
resource "sless_function" "f" {
  name       = %q
  source_dir = %q
%s
}
`, name, dir, extra)
}

// Create, code change and spec change in place, import, drift (spec, code, deletion)
// and destroy of one function.
func TestAccFunctionLifecycle(t *testing.T) {
	name := uniqueName("tfacc-life")
	v1 := codeDir(t, map[string]string{"handler.py": pyHandler("hello v1")})
	v2 := codeDir(t, map[string]string{"handler.py": pyHandler("hello v2"), "lib/helper.py": "X = 1\n"})
	zip1, _ := ZipDir(v1)
	zip2, _ := ZipDir(v2)
	env1 := `
  env           = { GREETING = "hi" }
  sensitive_env = { API_KEY = "s3cr3t" }
`
	env2 := `
  env           = { GREETING = "hey", MODE = "x" }
  sensitive_env = { API_KEY = "s3cr3t" }
  memory_mb     = 256
  timeout_s     = 12.5
  egress        = ["example.com:443"]
  auth          = "public"
`
	const addr = "sless_function.f"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             checkFunctionsGone,
		Steps: []resource.TestStep{
			{ // create
				Config: functionConfig(name, v1, env1),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "phase", "Ready"),
					resource.TestCheckResourceAttr(addr, "sha256", SHA256Hex(zip1)),
					resource.TestCheckResourceAttr(addr, "validation_verdict", "allow"),
					resource.TestCheckResourceAttr(addr, "runtime", "python3.11"),
					resource.TestCheckResourceAttr(addr, "memory_mb", "128"),
					resource.TestCheckResourceAttr(addr, "url", acc.endpoint+"/fn/"+acc.namespace+"/"+name),
					checkInvoke(addr, "hello v1"),
					checkRemote(name, func(f *Function) error {
						if f.Spec.Env["GREETING"] != "hi" || f.Spec.Env["API_KEY"] != "s3cr3t" {
							return fmt.Errorf("env %v", f.Spec.Env)
						}
						return nil
					}),
				),
			},
			{ // the same tree again: no diff at all
				Config:   functionConfig(name, v1, env1),
				PlanOnly: true,
			},
			{ // code change: in place
				Config: functionConfig(name, v2, env1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "sha256", SHA256Hex(zip2)),
					resource.TestCheckResourceAttr(addr, "phase", "Ready"),
					checkInvoke(addr, "hello v2"),
				),
			},
			{ // spec change: in place
				Config: functionConfig(name, v2, env2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "memory_mb", "256"),
					resource.TestCheckResourceAttr(addr, "sha256", SHA256Hex(zip2)),
					resource.TestCheckResourceAttr(addr, "phase", "Ready"),
					checkRemote(name, func(f *Function) error {
						if f.Spec.MemoryMB != 256 || f.Spec.TimeoutS != 12.5 || f.Spec.Env["MODE"] != "x" ||
							len(f.Spec.Egress) != 1 || f.Spec.Egress[0] != "example.com:443" {
							return fmt.Errorf("spec not applied: %+v", f.Spec)
						}
						return nil
					}),
					checkInvoke(addr, "hello v2"),
				),
			},
			{ // import by name
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     name,
				ImportStateVerify: true,
				// the gateway knows neither where the code came from nor which env values
				// were declared sensitive
				ImportStateVerifyIgnore: []string{"source_dir", "zip_file", "env", "sensitive_env", "build_timeout_sec", "wait_timeout_sec"},
			},
			{ // drift: the spec changed outside Terraform -> update back
				PreConfig: func() {
					f, err := acc.client.GetFunction(context.Background(), name)
					if err != nil {
						t.Fatal(err)
					}
					mem := int64(512)
					spec := FunctionSpec{Runtime: f.Spec.Runtime, Entrypoint: f.Spec.Entrypoint, Env: f.Spec.Env,
						MemoryMB: &mem, Egress: f.Spec.Egress, Auth: f.Spec.Auth}
					if _, err := acc.client.PutFunction(context.Background(), name, spec, ""); err != nil {
						t.Fatal(err)
					}
				},
				Config: functionConfig(name, v2, env2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: checkRemote(name, func(f *Function) error {
					if f.Spec.MemoryMB != 256 {
						return fmt.Errorf("memory_mb %d, want 256 restored", f.Spec.MemoryMB)
					}
					return nil
				}),
			},
			{ // drift: other code uploaded outside Terraform -> update uploads ours again
				PreConfig: func() {
					if _, err := acc.client.Upload(context.Background(), name, zip1); err != nil {
						t.Fatal(err)
					}
				},
				Config: functionConfig(name, v2, env2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "sha256", SHA256Hex(zip2)),
					checkInvoke(addr, "hello v2"),
				),
			},
			{ // drift: deleted outside Terraform -> the plan recreates it
				PreConfig: func() {
					if err := acc.client.DeleteFunction(context.Background(), name); err != nil {
						t.Fatal(err)
					}
				},
				Config: functionConfig(name, v2, env2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "phase", "Ready"),
					checkInvoke(addr, "hello v2"),
				),
			},
		},
	})
}

// A Node.js function from zip_file, read back through the data sources.
func TestAccFunctionZipFileNodeAndDataSources(t *testing.T) {
	name := uniqueName("tfacc-node")
	dir := codeDir(t, map[string]string{
		"handler.js": "exports.handle = async (event, context) => ({ message: 'hello node', function: context.function });\n",
	})
	data, err := ZipDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(t.TempDir(), "code.zip")
	if err := os.WriteFile(zipPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	config := providerBlock + fmt.Sprintf(`
resource "sless_function" "node" {
  name     = %q
  runtime  = "nodejs20"
  zip_file = %q
  auth     = "token"
}
data "sless_whoami" "me" {}
data "sless_function" "node" {
  name = sless_function.node.name
}
`, name, zipPath)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             checkFunctionsGone,
		Steps: []resource.TestStep{{
			Config: config,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("sless_function.node", "phase", "Ready"),
				resource.TestCheckResourceAttr("sless_function.node", "sha256", SHA256Hex(data)),
				resource.TestCheckResourceAttr("data.sless_whoami.me", "tenant", strings.TrimPrefix(acc.namespace, "sless-")),
				resource.TestCheckResourceAttr("data.sless_whoami.me", "namespace", acc.namespace),
				resource.TestCheckResourceAttr("data.sless_function.node", "runtime", "nodejs20"),
				resource.TestCheckResourceAttr("data.sless_function.node", "auth", "token"),
				resource.TestCheckResourceAttr("data.sless_function.node", "phase", "Ready"),
				resource.TestCheckResourceAttr("data.sless_function.node", "sha256", SHA256Hex(data)),
				func(s *terraform.State) error {
					// auth = token: an anonymous call is refused, a call with the tenant token answers
					url := s.RootModule().Resources["sless_function.node"].Primary.Attributes["url"]
					status, _, err := invoke(url)
					if err != nil || status != http.StatusUnauthorized {
						return fmt.Errorf("anonymous call: HTTP %d %v, want 401", status, err)
					}
					req, _ := http.NewRequest(http.MethodGet, url, nil)
					req.Header.Set("Authorization", "Bearer "+acc.token)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						return err
					}
					defer resp.Body.Close()
					body, _ := io.ReadAll(resp.Body)
					if resp.StatusCode != 200 || !strings.Contains(string(body), "hello node") {
						return fmt.Errorf("authorised call: HTTP %d %s", resp.StatusCode, body)
					}
					return nil
				},
			),
		}},
	})
}

func evilZip(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, name := range []string{"handler.py", "../evil"} {
		fw, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write([]byte(pyHandler("evil")))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "evil.zip")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A rejected upload fails the apply with the validation findings in the diagnostic.
func TestAccFunctionRejectedUpload(t *testing.T) {
	t.Run("path traversal in zip_file", func(t *testing.T) {
		name := uniqueName("tfacc-evil")
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Providers,
			CheckDestroy:             checkFunctionsGone,
			Steps: []resource.TestStep{{
				Config: providerBlock + fmt.Sprintf(`
resource "sless_function" "evil" {
  name     = %q
  zip_file = %q
}`, name, evilZip(t)),
				ExpectError: regexp.MustCompile(`(?s)rejected by validation.*verdict: reject.*\.\./evil`),
			}},
		})
	})
	t.Run("syntax error in source_dir", func(t *testing.T) {
		name := uniqueName("tfacc-syntax")
		dir := codeDir(t, map[string]string{"handler.py": "def handle(event, context)\n    return {'broken': True\n"})
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Providers,
			CheckDestroy:             checkFunctionsGone,
			Steps: []resource.TestStep{{
				Config:      functionConfig(name, dir, ""),
				ExpectError: regexp.MustCompile(`(?s)rejected by validation.*verdict: reject.*handler\.py`),
			}},
		})
	})
	t.Run("rejected update keeps the previous code", func(t *testing.T) {
		name := uniqueName("tfacc-keep")
		good := codeDir(t, map[string]string{"handler.py": pyHandler("still good")})
		bad := codeDir(t, map[string]string{"handler.py": "def handle(event, context)\n    return 1\n"})
		goodZip, _ := ZipDir(good)
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Providers,
			CheckDestroy:             checkFunctionsGone,
			Steps: []resource.TestStep{
				{Config: functionConfig(name, good, ""), Check: checkInvoke("sless_function.f", "still good")},
				{Config: functionConfig(name, bad, ""), ExpectError: regexp.MustCompile(`(?s)rejected by validation.*handler\.py`)},
				{ // the state still has the good code: the good tree plans no change
					Config: functionConfig(name, good, ""),
					Check: resource.ComposeAggregateTestCheckFunc(
						resource.TestCheckResourceAttr("sless_function.f", "sha256", SHA256Hex(goodZip)),
						checkInvoke("sless_function.f", "still good"),
					),
				},
			},
		})
	})
}

// An API error surfaces as a diagnostic with the API's message.
func TestAccFunctionAPIErrorMessage(t *testing.T) {
	dir := codeDir(t, map[string]string{"handler.py": pyHandler("x")})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             checkFunctionsGone,
		Steps: []resource.TestStep{{
			Config:      functionConfig(uniqueName("tfacc-err"), dir, `  env = { SLESS_SECRET = "x" }`),
			ExpectError: regexp.MustCompile(`(?s)HTTP 422 invalid:.*reserved`),
		}},
	})
}

func TestAccTriggerCron(t *testing.T) {
	skipUnlessRoute(t, "triggers")
	fn := uniqueName("tfacc-cronfn")
	trig := uniqueName("tfacc-tick")
	dir := codeDir(t, map[string]string{"handler.py": pyHandler("tick")})
	config := func(enabled bool, schedule string) string {
		return functionConfig(fn, dir, "") + fmt.Sprintf(`
resource "sless_trigger" "t" {
  name      = %q
  type      = "cron"
  function  = sless_function.f.name
  schedule  = %q
  payload   = jsonencode({ source = "terraform" })
  prewarm_s = 5
  enabled   = %t
}
`, trig, schedule, enabled)
	}
	const addr = "sless_trigger.t"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy: func(s *terraform.State) error {
			if _, err := acc.client.GetTrigger(context.Background(), trig); !IsNotFound(err) {
				return fmt.Errorf("trigger %s still there after destroy (%v)", trig, err)
			}
			return checkFunctionsGone(s)
		},
		Steps: []resource.TestStep{
			{
				Config: config(true, "*/5 * * * *"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "type", "cron"),
					resource.TestCheckResourceAttr(addr, "enabled", "true"),
					resource.TestCheckResourceAttr(addr, "schedule", "*/5 * * * *"),
				),
			},
			{ // enabled toggles in place
				Config: config(false, "*/5 * * * *"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					v, err := acc.client.GetTrigger(context.Background(), trig)
					if err != nil {
						return err
					}
					if e := v.Effective().Enabled; e == nil || *e {
						return fmt.Errorf("trigger still enabled: %+v", v.Effective())
					}
					return nil
				},
			},
			{
				ResourceName: addr, ImportState: true, ImportStateId: trig, ImportStateVerify: true,
			},
			{ // deleted outside Terraform -> recreated
				PreConfig: func() {
					if err := acc.client.DeleteTrigger(context.Background(), trig); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(false, "*/5 * * * *"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
			},
		},
	})
}

func TestAccJob(t *testing.T) {
	skipUnlessRoute(t, "jobs")
	fn := uniqueName("tfacc-jobfn")
	job := uniqueName("tfacc-job")
	dir := codeDir(t, map[string]string{"handler.py": "def handle(event, context):\n    body = event['body'] if isinstance(event['body'], dict) else {}\n    return {'sum': sum(body.get('numbers', []))}\n"})
	config := func(runID int) string {
		return functionConfig(fn, dir, "") + fmt.Sprintf(`
resource "sless_job" "j" {
  name     = %q
  function = sless_function.f.name
  payload  = jsonencode({ numbers = [1, 2, 3] })
  run_id   = %d
}
`, job, runID)
	}
	const addr = "sless_job.j"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             checkFunctionsGone,
		Steps: []resource.TestStep{
			{ // run_id 0: no run
				Config: config(0),
				Check:  resource.TestCheckResourceAttr(addr, "run_id", "0"),
			},
			{ // raising run_id runs the function
				Config: config(1),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "phase", "Succeeded"),
					func(s *terraform.State) error {
						var result map[string]any
						raw := s.RootModule().Resources[addr].Primary.Attributes["result"]
						if err := json.Unmarshal([]byte(raw), &result); err != nil {
							return fmt.Errorf("result %q: %v", raw, err)
						}
						if !strings.Contains(raw, "6") {
							return fmt.Errorf("result %s, want the sum 6", raw)
						}
						return nil
					},
				),
			},
			{ResourceName: addr, ImportState: true, ImportStateId: job, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"wait_for_completion", "wait_timeout_sec"}},
		},
	})
}

// A bad token fails at configure time with the API's message; the admin token is refused.
func TestAccProviderBadToken(t *testing.T) {
	config := func(token string) string {
		return fmt.Sprintf(`
terraform {
  required_providers {
    sless = { source = "sless/sless" }
  }
}
provider "sless" {
  endpoint = %q
  token    = %q
}
data "sless_whoami" "me" {}
`, acc.endpoint, token)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{Config: config("sl_t_not-a-real-token"), ExpectError: regexp.MustCompile(`(?s)Cannot reach the sless gateway.*HTTP 401 unauthorized`)},
		},
	})
}

// A trigger naming a function that does not exist: the gateway's 422 message surfaces.
func TestAccTriggerUnknownFunction(t *testing.T) {
	skipUnlessRoute(t, "triggers")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config: providerBlock + `
resource "sless_trigger" "t" {
  name     = "` + uniqueName("tfacc-orphan") + `"
  type     = "cron"
  function = "no-such-function"
  schedule = "0 * * * *"
}`,
			ExpectError: regexp.MustCompile(`(?s)Cannot put trigger.*HTTP 422 invalid:.*no-such-function`),
		}},
	})
}

// TestAccClientIfMatchAndCursor: the provider's client against the real gateway. An update
// with the ETag Terraform last read succeeds; the same, now stale, ETag is a 412 (shown as
// drift by the resource, never an overwrite); listing follows next_cursor.
func TestAccClientIfMatchAndCursor(t *testing.T) {
	if acc.client == nil {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	ctx := context.Background()
	name := uniqueName("tfacc-etag")
	spec := FunctionSpec{Runtime: "python3.11", Env: map[string]string{}, Egress: []string{}}
	first, err := acc.client.PutFunction(ctx, name, spec, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = acc.client.DeleteFunction(ctx, name) })
	read, err := acc.client.GetFunction(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if read.ETag() == "" {
		t.Fatalf("no resource_version in %+v", first)
	}
	mem := int64(256)
	spec.MemoryMB = &mem
	if _, err := acc.client.PutFunction(ctx, name, spec, read.ETag()); err != nil {
		t.Fatalf("put with the current ETag: %v", err)
	}
	_, err = acc.client.PutFunction(ctx, name, spec, read.ETag())
	if !IsPreconditionFailed(err) {
		t.Fatalf("put with a stale ETag: want 412, got %v", err)
	}
	names, err := acc.client.ListFunctionNames(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range names {
		found = found || n == name
	}
	if !found {
		t.Fatalf("%s not in %v", name, names)
	}
}
