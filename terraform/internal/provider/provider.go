// Package provider is the sless Terraform / OpenTofu provider.
package provider

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// DefaultEndpoint is used when neither endpoint nor SLESS_ENDPOINT is set.
const DefaultEndpoint = "http://127.0.0.1:8080"

var _ provider.Provider = (*slessProvider)(nil)

type slessProvider struct {
	version string
}

// New returns the provider factory the plugin server and the tests use.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &slessProvider{version: version} }
}

type providerModel struct {
	Endpoint types.String `tfsdk:"endpoint"`
	Token    types.String `tfsdk:"token"`
}

func (p *slessProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "sless"
	resp.Version = p.version
}

func (p *slessProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manages functions, triggers and jobs of one tenant of a sless gateway. " +
			"The tenant's namespace is learned from the token at configure time (GET /v1/whoami): " +
			"configurations never name a namespace.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				Optional: true,
				Description: "Base URL of the sless gateway, e.g. `https://sless.example.com`. " +
					"Defaults to the `SLESS_ENDPOINT` environment variable, then `" + DefaultEndpoint + "`.",
			},
			"token": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				Description: "A tenant token (`sl_t_...`). Defaults to the `SLESS_TOKEN` environment variable. " +
					"The provider admin token is refused: resources belong to a tenant.",
			},
		},
	}
}

func (p *slessProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if cfg.Endpoint.IsUnknown() || cfg.Token.IsUnknown() {
		resp.Diagnostics.AddError("Unknown provider configuration",
			"endpoint and token must be known when the plan is made; they cannot come from a resource that is not created yet.")
		return
	}
	endpoint := os.Getenv("SLESS_ENDPOINT")
	if !cfg.Endpoint.IsNull() && cfg.Endpoint.ValueString() != "" {
		endpoint = cfg.Endpoint.ValueString()
	}
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	token := os.Getenv("SLESS_TOKEN")
	if !cfg.Token.IsNull() && cfg.Token.ValueString() != "" {
		token = cfg.Token.ValueString()
	}
	if token == "" {
		resp.Diagnostics.AddAttributeError(path.Root("token"), "Missing sless token",
			"Set the provider's token attribute or the SLESS_TOKEN environment variable to a tenant token.")
		return
	}
	if !strings.HasPrefix(endpoint, "http://") && !strings.HasPrefix(endpoint, "https://") {
		resp.Diagnostics.AddAttributeError(path.Root("endpoint"), "Invalid sless endpoint",
			fmt.Sprintf("endpoint must be an http:// or https:// URL, got %q", endpoint))
		return
	}
	client := NewClient(endpoint, token, "terraform-provider-sless/"+p.version)
	who, err := client.Whoami(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Cannot reach the sless gateway",
			fmt.Sprintf("GET %s/v1/whoami failed: %s", client.Endpoint, err))
		return
	}
	if who.Admin || who.Namespace == nil || *who.Namespace == "" {
		resp.Diagnostics.AddAttributeError(path.Root("token"), "Not a tenant token",
			"The token belongs to no tenant (is it the provider admin token?). Use a tenant token: "+
				"functions, triggers and jobs live in a tenant's namespace.")
		return
	}
	client.Namespace = *who.Namespace
	if who.Tenant != nil {
		client.Tenant = *who.Tenant
	}
	resp.ResourceData = client
	resp.DataSourceData = client
}

func (p *slessProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{NewFunctionResource, NewTriggerResource, NewJobResource}
}

func (p *slessProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{NewFunctionDataSource, NewFunctionsDataSource, NewWhoamiDataSource}
}

// clientFrom turns provider data into the client, or reports why it cannot.
func clientFrom(data any) (*Client, string) {
	if data == nil {
		return nil, "" // not configured yet (validation): nothing to do
	}
	c, ok := data.(*Client)
	if !ok {
		return nil, fmt.Sprintf("unexpected provider data %T", data)
	}
	return c, ""
}
