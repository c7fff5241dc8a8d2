package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	_ datasource.DataSourceWithConfigure = (*functionDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*whoamiDataSource)(nil)
)

// NewFunctionDataSource is the sless_function data source.
func NewFunctionDataSource() datasource.DataSource { return &functionDataSource{} }

// NewWhoamiDataSource is the sless_whoami data source.
func NewWhoamiDataSource() datasource.DataSource { return &whoamiDataSource{} }

type functionDataSource struct{ client *Client }

type functionDataModel struct {
	ID                types.String  `tfsdk:"id"`
	Name              types.String  `tfsdk:"name"`
	Runtime           types.String  `tfsdk:"runtime"`
	Entrypoint        types.String  `tfsdk:"entrypoint"`
	Env               types.Map     `tfsdk:"env"`
	MemoryMB          types.Int64   `tfsdk:"memory_mb"`
	CPUMillis         types.Int64   `tfsdk:"cpu_millis"`
	TimeoutS          types.Float64 `tfsdk:"timeout_s"`
	Concurrency       types.Int64   `tfsdk:"concurrency"`
	MinInstances      types.Int64   `tfsdk:"min_instances"`
	MaxInstances      types.Int64   `tfsdk:"max_instances"`
	Egress            types.List    `tfsdk:"egress"`
	Auth              types.String  `tfsdk:"auth"`
	CallbackURL       types.String  `tfsdk:"callback_url"`
	CallbackSecret    types.String  `tfsdk:"callback_secret"`
	Secrets           types.Map     `tfsdk:"secrets"`
	SHA256            types.String  `tfsdk:"sha256"`
	Phase             types.String  `tfsdk:"phase"`
	Message           types.String  `tfsdk:"message"`
	URL               types.String  `tfsdk:"url"`
	ValidationVerdict types.String  `tfsdk:"validation_verdict"`
	Version           types.String  `tfsdk:"version"`
	Traffic           types.List    `tfsdk:"traffic"`
}

func (d *functionDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_function"
}

func (d *functionDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, Description: desc}
	}
	num := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{Computed: true, Description: desc}
	}
	resp.Schema = schema.Schema{
		Description: "Reads a function of the tenant's namespace: its spec and status.",
		Attributes: map[string]schema.Attribute{
			"id":         str("The function's name."),
			"name":       schema.StringAttribute{Required: true, Description: "The function's name.", Validators: nil},
			"runtime":    str("`python3.11` or `nodejs20`."),
			"entrypoint": str("`module.function` of the handler."),
			"env": schema.MapAttribute{Computed: true, Sensitive: true, ElementType: types.StringType,
				Description: "Environment variables (sensitive: they may hold secrets)."},
			"memory_mb":     num("Memory limit in MiB."),
			"cpu_millis":    num("CPU limit in thousandths of a core."),
			"timeout_s":     schema.Float64Attribute{Computed: true, Description: "Invocation timeout in seconds."},
			"concurrency":   num("Concurrent invocations per worker."),
			"min_instances": num("Workers kept warm."),
			"max_instances": num("Instances the function may scale to."),
			"egress": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				Description: "Outbound connections allowed (`host:port` / `CIDR:port`)."},
			"auth":            str("`public` or `token`."),
			"callback_url":    str("URL told when an asynchronous invocation ends (null: none)."),
			"callback_secret": str("Name of the secret that signs callbacks (null: unsigned)."),
			"secrets": schema.MapAttribute{Computed: true, ElementType: types.StringType,
				Description: "Secrets given to the function: secret name → environment variable (names only)."},
			"sha256":             str("sha256 of the uploaded code (empty before the first upload)."),
			"phase":              str("The function's phase."),
			"message":            str("The status message."),
			"url":                str("Public invocation URL."),
			"validation_verdict": str("Verdict of the last upload's validation."),
			"version":            str("The current version (`v1`, `v2`, ...; empty before the first upload)."),
			"traffic": schema.ListNestedAttribute{Computed: true,
				Description: "The traffic split: `version` and `percent` of each share (empty: all to the current version).",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"version": str("A version of the function."),
					"percent": num("Percent of the calls."),
				}}},
		},
	}
}

func (d *functionDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	c, problem := clientFrom(req.ProviderData)
	if problem != "" {
		resp.Diagnostics.AddError("Provider not configured", problem)
		return
	}
	d.client = c
}

func (d *functionDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var cfg functionDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	f, err := d.client.GetFunction(ctx, cfg.Name.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Cannot read function "+cfg.Name.ValueString(), apiMessage(err))
		return
	}
	var m functionModel
	resp.Diagnostics.Append(applyRemote(ctx, &m, f)...)
	out := functionDataModel{
		ID: m.ID, Name: m.Name, Runtime: m.Runtime, Entrypoint: m.Entrypoint, Env: m.Env,
		MemoryMB: m.MemoryMB, CPUMillis: m.CPUMillis, TimeoutS: m.TimeoutS, Concurrency: m.Concurrency,
		MinInstances: m.MinInstances, MaxInstances: m.MaxInstances, Egress: m.Egress, Auth: m.Auth,
		CallbackURL: m.CallbackURL, CallbackSecret: m.CallbackSecret, Secrets: m.Secrets, SHA256: m.SHA256, Phase: m.Phase,
		Message: m.Message, URL: m.URL, ValidationVerdict: m.ValidationVerdict,
		Version: m.Version, Traffic: m.Traffic,
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &out)...)
}

type whoamiDataSource struct{ client *Client }

type whoamiModel struct {
	ID        types.String `tfsdk:"id"`
	Tenant    types.String `tfsdk:"tenant"`
	Namespace types.String `tfsdk:"namespace"`
	Endpoint  types.String `tfsdk:"endpoint"`
}

func (d *whoamiDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_whoami"
}

func (d *whoamiDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The tenant and namespace the provider's token belongs to (GET /v1/whoami).",
		Attributes: map[string]schema.Attribute{
			"id":        schema.StringAttribute{Computed: true, Description: "The namespace."},
			"tenant":    schema.StringAttribute{Computed: true, Description: "The tenant's name."},
			"namespace": schema.StringAttribute{Computed: true, Description: "The tenant's namespace, `sless-<tenant>`."},
			"endpoint":  schema.StringAttribute{Computed: true, Description: "The gateway URL the provider talks to."},
		},
	}
}

func (d *whoamiDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	c, problem := clientFrom(req.ProviderData)
	if problem != "" {
		resp.Diagnostics.AddError("Provider not configured", problem)
		return
	}
	d.client = c
}

func (d *whoamiDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	who, err := d.client.Whoami(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read whoami", apiMessage(err))
		return
	}
	m := whoamiModel{Endpoint: types.StringValue(d.client.Endpoint)}
	if who.Namespace != nil {
		m.Namespace = types.StringValue(*who.Namespace)
		m.ID = types.StringValue(*who.Namespace)
	}
	if who.Tenant != nil {
		m.Tenant = types.StringValue(*who.Tenant)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// NewFunctionsDataSource is the sless_functions data source.
func NewFunctionsDataSource() datasource.DataSource { return &functionsDataSource{} }

type functionsDataSource struct{ client *Client }

type functionsModel struct {
	ID    types.String `tfsdk:"id"`
	Names types.List   `tfsdk:"names"`
}

func (d *functionsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_functions"
}

func (d *functionsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The names of every function of the namespace, in name order (GET .../functions, every page: the provider follows `next_cursor`).",
		Attributes: map[string]schema.Attribute{
			"id":    schema.StringAttribute{Computed: true, Description: "The namespace."},
			"names": schema.ListAttribute{Computed: true, ElementType: types.StringType, Description: "The functions' names."},
		},
	}
}

func (d *functionsDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	c, problem := clientFrom(req.ProviderData)
	if problem != "" {
		resp.Diagnostics.AddError("Provider not configured", problem)
		return
	}
	d.client = c
}

func (d *functionsDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	names, err := d.client.ListFunctionNames(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Cannot list functions", apiMessage(err))
		return
	}
	list, diags := types.ListValueFrom(ctx, types.StringType, names)
	resp.Diagnostics.Append(diags...)
	m := functionsModel{ID: types.StringValue(d.client.Namespace), Names: list}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
