"""`policy`: fit, show or store a routing policy and report it on a split."""

from __future__ import annotations

import argparse

from ticketnet.cli.common import ROUTER_HELP, interval, router_weights


def _print_policy_result(result: dict, policy, teams) -> None:
    t, s = result["thresholds"], result["sets"]
    o = t["overall"]
    print(f"{result['split']} ({o['n']:,} tickets, {result['source']}):")
    width = max(8, *(len(team) for team in teams))
    print(f"  {'team':<{width}}  threshold  predicted  auto-routed  coverage (95 % interval)  "
          f"precision (95 % interval)  misroutes")
    for team in teams:
        row = t["per_team"][team]
        threshold = "never" if row["threshold"] == float("inf") else f"{row['threshold']:.4f}"
        print(f"  {team:<{width}}  {threshold:>9}  {row['predicted']:>9,}  {row['auto_routed']:>11,}  "
              f"{interval(row['coverage']):<24}  {interval(row['precision']):<25}  {row['misroutes']:>9,}")
    print(f"  overall: {o['auto_routed']:,} of {o['n']:,} auto-routed, coverage {interval(o['coverage'])}, "
          f"precision {interval(o['precision'])}, {o['misroutes']:,} misroutes "
          f"({interval(o['misroutes_per_10000'], '.0f')} per 10,000 tickets); {o['to_person']:,} to a person")
    promised = 1 - policy.conformal.alpha
    sizes = ", ".join(f"{size}: {count:,}" for size, count in s["size_counts"].items())
    verdict = ""
    if s["coverage"]["high"] < promised:
        verdict = (f"; short of the promised {promised:g}: these tickets are not exchangeable with "
                   f"{policy.conformal.fitted_on}, where the guarantee holds")
    print(f"  sets ({policy.conformal.method.upper()}, alpha {policy.conformal.alpha:g}): coverage "
          f"{interval(s['coverage'])} for a promised {promised:g}, mean size {s['mean_size']:.2f} "
          f"(sizes {sizes}){verdict}")
    a = result["aurc"]
    print(f"  risk–coverage area {a['router']:.4f} (oracle {a['oracle']:.4f}, random ranking {a['random ranking']:.4f})")


def _policy(args: argparse.Namespace) -> int:
    from ticketnet.loading import load_any_card
    from ticketnet.paths import router_data
    from ticketnet.policy import load_policy, store_policy
    from ticketnet.policy._checks import check_alpha, check_target
    from ticketnet.policy.fit import FIT_SPLIT, REPORT_SPLITS, evaluate_policy, fit_policy, split_scores

    weights = router_weights(args)
    card = load_any_card(weights)
    teams = card.teams
    data = router_data(weights.parent)
    fitting = args.precision is not None or args.coverage is not None
    router = None                                      # loaded once, only if some split must be routed now
    if fitting:
        if args.alpha is None:
            raise ValueError("give --alpha (e.g. 0.05: sets that hold the true team 95 % of the time)")
        check_alpha(args.alpha)
        if args.precision is not None:
            check_target("precision", args.precision)
        else:
            check_target("coverage", args.coverage)
        fit = split_scores(weights, FIT_SPLIT, data)
        if fit is None:
            raise ValueError(f"{data / (FIT_SPLIT + '.csv')}: not found; a policy is fitted on the router's valid split")
        policy = fit_policy(fit, teams, precision=args.precision, coverage=args.coverage, alpha=args.alpha,
                            method=args.method, guarantee=args.guarantee)
    else:
        if args.alpha is not None or args.method != "lac" or args.guarantee is not None:
            raise ValueError("--alpha, --method and --guarantee fit a policy: give --precision or --coverage too")
        if not args.show:
            raise ValueError("give --precision or --coverage (a target to fit), or --show for the stored policy")
        policy = load_policy(card)
        if policy is None:
            raise ValueError(f"{weights.parent / 'router.json'}: no stored policy; fit one with --precision or "
                             f"--coverage")
    target = ", ".join(f"{k} {v:g}" for k, v in policy.thresholds.target.items())
    f = policy.fitted
    print(f"fitted on {f.get('split', FIT_SPLIT)} ({f.get('n', 0):,} tickets, {f.get('source', '?')}, "
          f"{f.get('date', '?')}): target {target}; {policy.conformal.method.upper()} sets at alpha "
          f"{policy.conformal.alpha:g} (quantile {policy.conformal.quantile:.4f})")
    if not policy.thresholds.reached:
        print(f"  the target is not reached by every team on {f.get('split', FIT_SPLIT)}; the highest precision "
              f"every team reaches is {policy.thresholds.best_reachable:.4f}")
    for message in policy.thresholds.messages:
        print(f"  {message}")
    reported = 0
    for split in REPORT_SPLITS:
        scores = split_scores(weights, split, data, router)
        if scores is None:
            continue
        _print_policy_result(evaluate_policy(policy, scores, teams), policy, teams)
        reported += 1
    if not reported:
        print(f"no test or handwritten split in {data}: nothing to report the policy on (never on the split it "
              f"was fitted on)")
    if fitting and not args.show:
        path = store_policy(weights.parent, policy)
        print(f"stored in {path} under \"policy\"; predict and scan now add the columns auto and team_set")
    return 0


def _policy_parser(sub) -> None:
    p = sub.add_parser("policy", help="fit per-team auto-routing thresholds and conformal prediction sets on valid, "
                                      "report them on test and handwritten, and store them in router.json")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--precision", type=float, help="target precision of the auto-routed tickets (e.g. 0.98)")
    target.add_argument("--coverage", type=float, help="target automation rate: the share auto-routed (e.g. 0.6)")
    p.add_argument("--alpha", type=float, help="the sets miss the true team at most this often (e.g. 0.05)")
    p.add_argument("--method", choices=("lac", "aps"), default="lac",
                   help="conformal score: lac (smallest sets) or aps (sets that grow with doubt); default lac")
    p.add_argument("--guarantee", type=float, metavar="DELTA",
                   help="with --precision: thresholds whose precision holds with probability >= 1 - DELTA on tickets "
                        "like valid (exact binomial tests), instead of the lowest that reach it on valid")
    p.add_argument("--show", action="store_true", help="report without storing; alone: the stored policy")
    p.add_argument("--router", help=ROUTER_HELP)
    p.add_argument("--weights", help="older: a router.pt with vocab.json and router.json beside it")
    p.set_defaults(func=_policy)


def add_parsers(sub) -> None:
    _policy_parser(sub)
