// Command terraform-provider-sless is the Terraform / OpenTofu provider for sless.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"sless.kube5s.ru/terraform-provider-sless/internal/provider"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// The reference in docs/ is generated with tfplugindocs: scripts/terraform-test --docs.

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers (prints TF_REATTACH_PROVIDERS)")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/sless/sless",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
