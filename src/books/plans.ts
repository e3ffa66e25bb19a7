/** Plan tiers: how many active keys a tenant may hold, and each key's budget per window. */
export const PLANS = {
  small: { activeKeys: 2, readsPerWindow: 600, writesPerWindow: 60 },
  middle: { activeKeys: 5, readsPerWindow: 1200, writesPerWindow: 120 },
  large: { activeKeys: 15, readsPerWindow: 3000, writesPerWindow: 300 },
} as const;

export type Plan = keyof typeof PLANS;
export const PLAN_NAMES = Object.keys(PLANS) as Plan[];
