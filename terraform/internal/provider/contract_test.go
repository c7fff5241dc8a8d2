package provider

// Until the gateway serves triggers and jobs (issue 6), sless_trigger and sless_job run
// through the real CLI against a small HTTP server that answers the documented contract
// (ARCHITECTURE.md: PUT|GET|DELETE .../triggers/{name} and .../jobs/{name}, answers shaped
// like the gateway's models: {name, namespace, spec, status}). These tests check the
// provider's side of the contract; TestAccTriggerCron / TestAccJob check the real gateway
// once it answers those paths.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

type contractServer struct {
	mu       sync.Mutex
	triggers map[string]map[string]any
	jobs     map[string]*contractJob
	deleted  map[string]int // GETs that still see a deleted trigger (delete waits for it)
}

type contractJob struct {
	spec   map[string]any
	status map[string]any
	polls  int
}

const contractNS = "sless-contract"

func newContractServer(t *testing.T) (*contractServer, string) {
	cs := &contractServer{triggers: map[string]map[string]any{}, jobs: map[string]*contractJob{}, deleted: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(cs.serve))
	t.Cleanup(srv.Close)
	return cs, srv.URL
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": message}})
}

func (cs *contractServer) serve(w http.ResponseWriter, r *http.Request) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer sl_t_contract" {
		apiError(w, 401, "unauthorized", "missing or invalid token")
		return
	}
	if r.URL.Path == "/v1/whoami" {
		writeJSON(w, 200, map[string]any{"tenant": "contract", "namespace": contractNS})
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/namespaces/"), "/")
	if len(parts) != 3 || parts[0] != contractNS || (parts[1] != "triggers" && parts[1] != "jobs") {
		apiError(w, 404, "not_found", "Not Found")
		return
	}
	kind, name := parts[1], parts[2]
	var body map[string]any
	if r.Method == http.MethodPut {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			apiError(w, 422, "invalid", err.Error())
			return
		}
	}
	if kind == "triggers" {
		cs.trigger(w, r.Method, name, body)
	} else {
		cs.job(w, r.Method, name, body)
	}
}

func (cs *contractServer) trigger(w http.ResponseWriter, method, name string, body map[string]any) {
	view := func(spec map[string]any) map[string]any {
		phase := "Active"
		if spec["enabled"] == false {
			phase = "Suspended"
		}
		return map[string]any{"name": name, "namespace": contractNS, "spec": spec, "status": map[string]any{"phase": phase, "message": ""}}
	}
	switch method {
	case http.MethodPut:
		if body["type"] == "cron" && body["schedule"] == nil {
			apiError(w, 422, "invalid", "a cron trigger needs a schedule")
			return
		}
		for k, v := range map[string]any{"enabled": true, "payload": nil} {
			if _, ok := body[k]; !ok {
				body[k] = v
			}
		}
		if body["type"] == "cron" {
			if _, ok := body["timezone"]; !ok {
				body["timezone"] = "UTC"
			}
			if _, ok := body["prewarm_s"]; !ok {
				body["prewarm_s"] = 0.0
			}
		}
		delete(body, "url_secret") // a secret: stored elsewhere, never read back
		status := 200
		if _, ok := cs.triggers[name]; !ok {
			status = 201
		}
		cs.triggers[name] = body
		writeJSON(w, status, view(body))
	case http.MethodGet:
		spec, ok := cs.triggers[name]
		if !ok {
			apiError(w, 404, "not_found", fmt.Sprintf("trigger %s not found", name))
			return
		}
		if n := cs.deleted[name]; n > 0 { // deletion in progress
			cs.deleted[name] = n - 1
			if n == 1 {
				delete(cs.triggers, name)
			}
		}
		writeJSON(w, 200, view(spec))
	case http.MethodDelete:
		if _, ok := cs.triggers[name]; !ok {
			apiError(w, 404, "not_found", fmt.Sprintf("trigger %s not found", name))
			return
		}
		cs.deleted[name] = 2 // still visible for two reads: the provider must wait
		writeJSON(w, 200, map[string]any{"deleted": name})
	}
}

func (cs *contractServer) job(w http.ResponseWriter, method, name string, body map[string]any) {
	view := func(j *contractJob) map[string]any {
		return map[string]any{"name": name, "namespace": contractNS, "spec": j.spec, "status": j.status}
	}
	switch method {
	case http.MethodPut:
		j, ok := cs.jobs[name]
		status := 200
		if !ok {
			j = &contractJob{status: map[string]any{"phase": nil, "message": "", "run_id": nil, "result": nil}}
			cs.jobs[name] = j
			status = 201
		}
		if _, ok := body["run_id"]; !ok {
			body["run_id"] = 0.0
		}
		runID := body["run_id"].(float64)
		last, _ := j.status["run_id"].(float64)
		if runID < last {
			apiError(w, 422, "invalid", "run_id may not go down")
			return
		}
		j.spec = body
		if runID > last {
			j.status = map[string]any{"phase": "Pending", "message": "", "run_id": runID, "result": nil}
			j.polls = 0
		}
		writeJSON(w, status, view(j))
	case http.MethodGet:
		j, ok := cs.jobs[name]
		if !ok {
			apiError(w, 404, "not_found", fmt.Sprintf("job %s not found", name))
			return
		}
		if phase := j.status["phase"]; phase == "Pending" || phase == "Running" {
			j.polls++
			if j.polls == 1 {
				j.status["phase"] = "Running"
			} else {
				sum := 0.0
				payload, _ := j.spec["payload"].(map[string]any)
				numbers, _ := payload["numbers"].([]any)
				for _, n := range numbers {
					sum += n.(float64)
				}
				if payload["fail"] == true {
					j.status["phase"], j.status["error"] = "Failed", "the function raised ValueError"
				} else {
					j.status["phase"] = "Succeeded"
					raw, _ := json.Marshal(map[string]any{"sum": sum})
					j.status["result"] = string(raw)
				}
			}
		}
		writeJSON(w, 200, view(j))
	case http.MethodDelete:
		if _, ok := cs.jobs[name]; !ok {
			apiError(w, 404, "not_found", fmt.Sprintf("job %s not found", name))
			return
		}
		delete(cs.jobs, name)
		writeJSON(w, 200, map[string]any{"deleted": name})
	}
}

func contractProvider(url string) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    sless = { source = "sless/sless" }
  }
}
provider "sless" {
  endpoint = %q
  token    = "sl_t_contract"
}
`, url)
}

func TestAccContractTrigger(t *testing.T) {
	if acc.tofu == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	cs, url := newContractServer(t)
	config := func(enabled bool, schedule, extra string) string {
		return contractProvider(url) + fmt.Sprintf(`
resource "sless_trigger" "cron" {
  name      = "tick"
  type      = "cron"
  function  = "report"
  schedule  = %q
  payload   = jsonencode({ source = "terraform", n = 1 })
  enabled   = %t
%s
}
resource "sless_trigger" "http" {
  name     = "web"
  type     = "http"
  function = "report"
}
resource "sless_trigger" "rabbit" {
  name         = "orders"
  type         = "rabbitmq"
  function     = "report"
  url_secret   = "amqp://user:pass@broker:5672/"
  queue        = "orders"
  max_attempts = 5
}
`, schedule, enabled, extra)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy: func(*terraform.State) error {
			if len(cs.triggers) != 0 {
				return fmt.Errorf("triggers left after destroy: %v", cs.triggers)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config(true, "*/5 * * * *", ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("sless_trigger.cron", "timezone", "UTC"),
					resource.TestCheckResourceAttr("sless_trigger.cron", "prewarm_s", "0"),
					resource.TestCheckResourceAttr("sless_trigger.cron", "enabled", "true"),
					resource.TestCheckResourceAttr("sless_trigger.http", "enabled", "true"),
					resource.TestCheckResourceAttr("sless_trigger.rabbit", "max_attempts", "5"),
					resource.TestCheckResourceAttr("sless_trigger.rabbit", "url_secret", "amqp://user:pass@broker:5672/"),
				),
			},
			{Config: config(true, "*/5 * * * *", ""), PlanOnly: true},
			{ // enabled and prewarm_s change in place
				Config: config(false, "*/5 * * * *", "  prewarm_s = 15\n  timezone = \"Europe/Berlin\""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("sless_trigger.cron", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("sless_trigger.http", plancheck.ResourceActionNoop),
				}},
				Check: func(*terraform.State) error {
					spec := cs.triggers["tick"]
					if spec["enabled"] != false || spec["prewarm_s"] != 15.0 || spec["timezone"] != "Europe/Berlin" {
						return fmt.Errorf("not applied: %v", spec)
					}
					return nil
				},
			},
			{ResourceName: "sless_trigger.cron", ImportState: true, ImportStateId: "tick", ImportStateVerify: true},
			{ResourceName: "sless_trigger.rabbit", ImportState: true, ImportStateId: "orders", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"url_secret"}},
			{ // drift: changed and deleted outside Terraform
				PreConfig: func() {
					cs.mu.Lock()
					cs.triggers["tick"]["schedule"] = "0 0 * * *"
					delete(cs.triggers, "web")
					cs.mu.Unlock()
				},
				Config: config(false, "*/5 * * * *", "  prewarm_s = 15\n  timezone = \"Europe/Berlin\""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("sless_trigger.cron", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("sless_trigger.http", plancheck.ResourceActionCreate),
				}},
			},
		},
	})
}

func TestAccContractTriggerConfigErrors(t *testing.T) {
	if acc.tofu == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	_, url := newContractServer(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config: contractProvider(url) + `
resource "sless_trigger" "bad" {
  name     = "bad"
  type     = "cron"
  function = "report"
}`,
				ExpectError: regexp.MustCompile(`a cron trigger needs schedule`),
			},
			{
				Config: contractProvider(url) + `
resource "sless_trigger" "bad" {
  name     = "bad"
  type     = "http"
  function = "report"
  queue    = "q"
}`,
				ExpectError: regexp.MustCompile(`queue is not an attribute of a http trigger`),
			},
		},
	})
}

func TestAccContractJob(t *testing.T) {
	if acc.tofu == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	cs, url := newContractServer(t)
	config := func(runID int, payload string) string {
		return contractProvider(url) + fmt.Sprintf(`
resource "sless_job" "j" {
  name     = "sum"
  function = "adder"
  payload  = jsonencode(%s)
  run_id   = %d
}
output "result" {
  value = sless_job.j.result == "" ? null : jsondecode(sless_job.j.result)
}
`, payload, runID)
	}
	const addr = "sless_job.j"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy: func(*terraform.State) error {
			if len(cs.jobs) != 0 {
				return fmt.Errorf("jobs left after destroy")
			}
			return nil
		},
		Steps: []resource.TestStep{
			{ // run_id 0: nothing runs
				Config: config(0, `{ numbers = [1, 2, 3] }`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "phase", ""),
					resource.TestCheckResourceAttr(addr, "result", ""),
				),
			},
			{ // raising run_id runs it and waits for the result
				Config: config(1, `{ numbers = [1, 2, 3] }`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "phase", "Succeeded"),
					resource.TestCheckResourceAttr(addr, "result", `{"sum":6}`),
					func(s *terraform.State) error { // jsondecode(result) works in a configuration
						out := s.RootModule().Outputs["result"]
						if m, ok := out.Value.(map[string]any); !ok || fmt.Sprint(m["sum"]) != "6" {
							return fmt.Errorf("output result = %#v", out.Value)
						}
						return nil
					},
				),
			},
			{ // a payload change alone runs nothing and keeps the last result
				Config: config(1, `{ numbers = [5] }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.TestCheckResourceAttr(addr, "result", `{"sum":6}`),
			},
			{ // run again
				Config: config(2, `{ numbers = [5] }`),
				Check:  resource.TestCheckResourceAttr(addr, "result", `{"sum":5}`),
			},
			{ // a lower run_id is refused at plan time
				Config:      config(1, `{ numbers = [5] }`),
				ExpectError: regexp.MustCompile(`run_id may only grow`),
			},
			{ // a failed run fails the apply with the reason
				Config:      config(3, `{ numbers = [1], fail = true }`),
				ExpectError: regexp.MustCompile(`(?s)run 3 failed.*ValueError`),
			},
			{ResourceName: addr, ImportState: true, ImportStateId: "sum", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"wait_for_completion", "wait_timeout_sec"}},
			{ // deleted outside Terraform: planned again
				PreConfig: func() {
					cs.mu.Lock()
					delete(cs.jobs, "sum")
					cs.mu.Unlock()
				},
				Config: config(4, `{ numbers = [2, 2] }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
				Check: resource.TestCheckResourceAttr(addr, "result", `{"sum":4}`),
			},
		},
	})
}
