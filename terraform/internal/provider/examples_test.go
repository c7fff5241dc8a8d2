package provider

// The examples in examples/terraform/ are applied and destroyed with the real CLI, as a
// user runs them: a built provider binary installed through dev_overrides (the README's
// "install from a local build"), `tofu apply`, a plan that must be empty, `tofu destroy`.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var buildProviderOnce struct {
	sync.Once
	dir string
	err error
}

// providerBinDir returns a directory holding terraform-provider-sless: SLESS_TF_PROVIDER_DIR
// (scripts/terraform-test builds it there), or a fresh build.
func providerBinDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("SLESS_TF_PROVIDER_DIR"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "terraform-provider-sless")); err == nil {
			return dir
		}
	}
	buildProviderOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sless-tf-provider-")
		if err != nil {
			buildProviderOnce.err = err
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "terraform-provider-sless"), ".")
		cmd.Dir = moduleRoot()
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildProviderOnce.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
		buildProviderOnce.dir = dir
	})
	if buildProviderOnce.err != nil {
		t.Fatal(buildProviderOnce.err)
	}
	return buildProviderOnce.dir
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if d.Name() == ".terraform" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		if strings.HasPrefix(d.Name(), "terraform.tfstate") || d.Name() == ".terraform.lock.hcl" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

type tofuRun struct {
	t   *testing.T
	dir string
	env []string
}

func (r *tofuRun) run(args ...string) (string, int) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, acc.tofu, args...)
	cmd.Dir = r.dir
	cmd.Env = r.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			r.t.Fatalf("tofu %s: %v", strings.Join(args, " "), err)
		}
	}
	return out.String(), code
}

func (r *tofuRun) must(args ...string) string {
	r.t.Helper()
	out, code := r.run(args...)
	if code != 0 {
		r.t.Fatalf("tofu %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

func exampleRun(t *testing.T, example string) *tofuRun {
	t.Helper()
	src := filepath.Join(moduleRoot(), "..", "examples", "terraform", example)
	dir := filepath.Join(t.TempDir(), example)
	copyTree(t, src, dir)
	cliConfig := filepath.Join(t.TempDir(), "tofurc")
	rc := fmt.Sprintf(`provider_installation {
  dev_overrides {
    "sless/sless" = %q
  }
  direct {}
}
`, providerBinDir(t))
	if err := os.WriteFile(cliConfig, []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TF_") || strings.HasPrefix(kv, "SLESS_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "TF_CLI_CONFIG_FILE="+cliConfig, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1",
		"SLESS_ENDPOINT="+acc.endpoint, "SLESS_TOKEN="+acc.token)
	return &tofuRun{t: t, dir: dir, env: env}
}

func outputs(t *testing.T, r *tofuRun) map[string]any {
	t.Helper()
	var raw map[string]struct {
		Value any `json:"value"`
	}
	if err := json.Unmarshal([]byte(r.must("output", "-json")), &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for k, v := range raw {
		out[k] = v.Value
	}
	return out
}

// applyExample applies, checks the plan is then empty, runs check and destroys.
func applyExample(t *testing.T, example string, check func(r *tofuRun)) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	r := exampleRun(t, example)
	destroyed := false
	defer func() {
		if !destroyed {
			if out, code := r.run("destroy", "-auto-approve", "-input=false", "-no-color"); code != 0 {
				t.Errorf("cleanup destroy failed:\n%s", out)
			}
		}
	}()
	r.must("apply", "-auto-approve", "-input=false", "-no-color")
	// the same tree plans nothing: the archive is deterministic
	if out, code := r.run("plan", "-detailed-exitcode", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("plan after apply is not empty (exit %d):\n%s", code, out)
	}
	if check != nil {
		check(r)
	}
	r.must("destroy", "-auto-approve", "-input=false", "-no-color")
	destroyed = true
	if state := r.must("state", "list"); strings.TrimSpace(state) != "" {
		t.Fatalf("state not empty after destroy: %s", state)
	}
}

func checkURLOutput(want string) func(r *tofuRun) {
	return func(r *tofuRun) {
		url, _ := outputs(r.t, r)["url"].(string)
		var last string
		for i := 0; i < 20; i++ {
			status, body, err := invoke(url + "?name=Ada")
			if err == nil && status == 200 && strings.Contains(body, want) {
				return
			}
			last = fmt.Sprintf("HTTP %d %s %v", status, body, err)
			time.Sleep(500 * time.Millisecond)
		}
		r.t.Fatalf("GET %s: want %q, got %s", url, want, last)
	}
}

func TestAccExampleHelloPython(t *testing.T) {
	applyExample(t, "hello-python", checkURLOutput("Hello, Ada!"))
}

func TestAccExampleHelloNode(t *testing.T) {
	applyExample(t, "hello-node", checkURLOutput("Hello, Ada!"))
}

func TestAccExampleFunctionWithCron(t *testing.T) {
	skipUnlessRoute(t, "triggers")
	applyExample(t, "function-with-cron", nil)
}

func TestAccExampleJob(t *testing.T) {
	skipUnlessRoute(t, "jobs")
	applyExample(t, "job", func(r *tofuRun) {
		out := outputs(r.t, r)
		if out["phase"] != "Succeeded" {
			r.t.Fatalf("job phase %v, want Succeeded (outputs %v)", out["phase"], out)
		}
		raw, _ := json.Marshal(out["result"])
		if !strings.Contains(string(raw), "10") {
			r.t.Fatalf("job result %s, want the sum 10", raw)
		}
	})
}
