package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// Autoscaling attributes: concurrency (the target per instance), min_instances and
// max_instances reach the gateway's spec, change in place, and a max_instances above the
// tenant's quota (10 by default) or below min_instances fails with the API's message.
func TestAccFunctionScaling(t *testing.T) {
	name := uniqueName("tfacc-scale")
	dir := codeDir(t, map[string]string{"handler.py": pyHandler("scaled")})
	const addr = "sless_function.f"
	scaling := func(concurrency, minimum, maximum int) string {
		return fmt.Sprintf("  concurrency   = %d\n  min_instances = %d\n  max_instances = %d\n",
			concurrency, minimum, maximum)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             checkFunctionsGone,
		Steps: []resource.TestStep{
			{ // the default: 4 instances at most
				Config: functionConfig(name, dir, ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "phase", "Ready"),
					resource.TestCheckResourceAttr(addr, "max_instances", "4"),
					checkInvoke(addr, "scaled"),
				),
			},
			{
				Config: functionConfig(name, dir, scaling(8, 1, 6)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "max_instances", "6"),
					resource.TestCheckResourceAttr(addr, "concurrency", "8"),
					checkRemote(name, func(f *Function) error {
						if f.Spec.Concurrency != 8 || f.Spec.MinInstances != 1 || f.Spec.MaxInstances != 6 {
							return fmt.Errorf("scaling not applied: %+v", f.Spec)
						}
						return nil
					}),
					checkInvoke(addr, "scaled"),
				),
			},
			{Config: functionConfig(name, dir, scaling(8, 1, 6)), PlanOnly: true},
			{
				Config:      functionConfig(name, dir, scaling(8, 1, 11)),
				ExpectError: regexp.MustCompile(`(?s)quota max_instances exceeded`),
			},
			{
				Config:      functionConfig(name, dir, scaling(8, 3, 2)),
				ExpectError: regexp.MustCompile(`(?s)may not exceed max_instances`),
			},
			{
				Config: functionConfig(name, dir, "  max_instances = 1\n"),
				Check: checkRemote(name, func(f *Function) error {
					if f.Spec.MaxInstances != 1 || f.Spec.MinInstances != 0 {
						return fmt.Errorf("max_instances not lowered: %+v", f.Spec)
					}
					return nil
				}),
			},
		},
	})
}
