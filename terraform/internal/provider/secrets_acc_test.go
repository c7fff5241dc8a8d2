package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
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
