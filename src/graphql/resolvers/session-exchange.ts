/** SessionExchange: `markdown` is absent from a page read without content. */
import type { ResolversOf } from './complete';

export const SessionExchange: ResolversOf<'SessionExchange'> = {
  markdown: (e) => e.markdown ?? '',
};
