package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// A function's `secrets` map: the value (stored with the API, never in the state) reaches
// the function as an environment variable; removing the map entry removes the reference.
func TestAccFunctionSecrets(t *testing.T) {
	name := uniqueName("tfacc-secret")
	secret := uniqueName("tfacc-db")
	value := "tfacc-value-" + randomHex(4)
	digest := sha256.Sum256([]byte(value))
	dir := codeDir(t, map[string]string{"handler.py": "import hashlib, os\n" +
		"def handle(event, context):\n" +
		"    value = os.environ.get('DB_PASSWORD', '')\n" +
		"    return {'sha256': hashlib.sha256(value.encode()).hexdigest()}\n"})
	withSecret := fmt.Sprintf("  secrets = { %q = \"DB_PASSWORD\" }\n", secret)
	const addr = "sless_function.f"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             checkFunctionsGone,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					body := []byte(fmt.Sprintf(`{"value": %q}`, value))
					path := acc.client.nsPath("secrets", secret)
					if _, err := acc.client.do(context.Background(), "PUT", path, "application/json", body, nil); err != nil {
						t.Fatalf("PUT secret: %v", err)
					}
				},
				Config: functionConfig(name, dir, withSecret),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "phase", "Ready"),
					resource.TestCheckResourceAttr(addr, "secrets."+secret, "DB_PASSWORD"),
					checkInvoke(addr, hex.EncodeToString(digest[:])),
				),
			},
			{Config: functionConfig(name, dir, withSecret), PlanOnly: true},
			{
				Config: functionConfig(name, dir, ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "secrets.%", "0"),
					checkRemote(name, func(f *Function) error {
						if len(f.Spec.Secrets) != 0 {
							return fmt.Errorf("secrets still set: %v", f.Spec.Secrets)
						}
						return nil
					}),
				),
			},
			{ // a secret that does not exist fails the apply with the API's message
				Config:      functionConfig(name, dir, "  secrets = { nope = \"X\" }\n"),
				ExpectError: regexp.MustCompile(`(?s)secret 'nope' not found`),
			},
		},
	})
}

// Versions and the traffic split: each apply with new code is a new version (read from
// the `version` attribute); `traffic` blocks give a canary its share, and the new code is
// uploaded with 0 % first, so it never gets more than configured.
func TestAccFunctionTraffic(t *testing.T) {
	name := uniqueName("tfacc-traffic")
	one := codeDir(t, map[string]string{"handler.py": pyHandler("answer one")})
	two := codeDir(t, map[string]string{"handler.py": pyHandler("answer two")})
	const addr = "sless_function.f"
	split := `
  traffic {
    version = "v1"
    percent = 80
  }
  traffic {
    version = "v2"
    percent = 20
  }
`
	answers := func(want ...string) resource.TestCheckFunc {
		return checkRemote(name, func(f *Function) error {
			seen := map[string]bool{}
			for i := 0; i < 80 && len(seen) < len(want); i++ {
				_, body, err := invoke(f.URL)
				if err != nil {
					return err
				}
				for _, w := range want {
					if strings.Contains(body, w) {
						seen[w] = true
					}
				}
			}
			if len(seen) != len(want) {
				return fmt.Errorf("80 calls reached %v, want all of %v", seen, want)
			}
			return nil
		})
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             checkFunctionsGone,
		Steps: []resource.TestStep{
			{
				Config: functionConfig(name, one, ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "version", "v1"),
					resource.TestCheckResourceAttr(addr, "traffic.#", "0"),
					checkInvoke(addr, "answer one"),
				),
			},
			{ // new code as a canary: v2 gets 20 %
				Config: functionConfig(name, two, split),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "version", "v2"),
					resource.TestCheckResourceAttr(addr, "traffic.#", "2"),
					resource.TestCheckResourceAttr(addr, "traffic.1.version", "v2"),
					resource.TestCheckResourceAttr(addr, "traffic.1.percent", "20"),
					checkRemote(name, func(f *Function) error {
						if len(f.Spec.Traffic) != 2 || f.Spec.Traffic[0] != (TrafficTarget{"v1", 80}) {
							return fmt.Errorf("traffic: %v", f.Spec.Traffic)
						}
						return nil
					}),
					answers("answer one", "answer two"),
				),
			},
			{Config: functionConfig(name, two, split), PlanOnly: true},
			{ // promoted: no split, every call to v2
				Config: functionConfig(name, two, ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "version", "v2"),
					resource.TestCheckResourceAttr(addr, "traffic.#", "0"),
					checkRemote(name, func(f *Function) error {
						if len(f.Spec.Traffic) != 0 {
							return fmt.Errorf("traffic still set: %v", f.Spec.Traffic)
						}
						return nil
					}),
				),
			},
			{ // a split that does not add up is the gateway's clear 422
				Config: functionConfig(name, two, `
  traffic {
    version = "v1"
    percent = 50
  }
`),
				ExpectError: regexp.MustCompile(`(?s)add up to 50`),
			},
		},
	})
}

// A function written for AWS Lambda, deployed unmodified: `interface = "lambda"` plans the
// Lambda console's entrypoint, the call gets API Gateway's event, and changing the
// interface back moves the planned default with it.
func TestAccFunctionInterface(t *testing.T) {
	name := uniqueName("tfacc-iface")
	dir := codeDir(t, map[string]string{
		"lambda_function.py": "import json\n" +
			"def lambda_handler(event, context):\n" +
			"    return {'statusCode': 200, 'body': json.dumps({'rest_api_shape': 'httpMethod' in event})}\n",
		"handler.py": pyHandler("plain sless"),
	})
	const addr = "sless_function.f"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             checkFunctionsGone,
		Steps: []resource.TestStep{
			{
				Config: functionConfig(name, dir, "  interface = \"lambda\"\n"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "interface", "lambda"),
					resource.TestCheckResourceAttr(addr, "entrypoint", "lambda_function.lambda_handler"),
					resource.TestCheckNoResourceAttr(addr, "payload_format_version"),
					checkInvoke(addr, `"rest_api_shape": false`),
				),
			},
			{ // REST API's event shape
				Config: functionConfig(name, dir, "  interface = \"lambda\"\n  payload_format_version = \"1.0\"\n"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "payload_format_version", "1.0"),
					checkInvoke(addr, `"rest_api_shape": true`),
				),
			},
			{ // back to sless: the planned entrypoint is sless's default again
				Config: functionConfig(name, dir, ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "interface", "sless"),
					resource.TestCheckResourceAttr(addr, "entrypoint", "handler.handle"),
					checkInvoke(addr, "plain sless"),
				),
			},
			{ // the gateway refuses what cannot run: ASGI is a Python specification
				Config:      functionConfig(name, dir, "  runtime = \"nodejs20\"\n  interface = \"asgi\"\n"),
				ExpectError: regexp.MustCompile(`(?s)interface 'asgi' is not available for nodejs20`),
			},
		},
	})
}
