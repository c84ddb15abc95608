/** Share links: the share service's DTO, with the audience as an enum value and the session it shows. */
import type { Audience } from '../../services/presenters/share';
import type { ResolversOf } from './complete';

const gqlAudience = (a: Audience): 'PUBLIC' | 'SIGNED_IN' => (a === 'signed-in' ? 'SIGNED_IN' : 'PUBLIC');
export const serviceAudience = (a: 'PUBLIC' | 'SIGNED_IN'): Audience => (a === 'SIGNED_IN' ? 'signed-in' : 'public');

export const Share: ResolversOf<'Share'> = {
  audience: (s) => gqlAudience(s.audience),
  // Through the per-request session loader: one statement for the sessions of every link listed.
  session: (s, _a, { loaders }) => loaders.session.load({ projectId: s.projectId, sessionId: s.sessionId }),
};
