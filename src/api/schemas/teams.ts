/** Teams, their members and invitations. */
import { Timestamp, z } from './common';
import { LegalHold, RetentionDays } from './retention';

export const Role = z.enum(['admin', 'member', 'viewer']);

export const Team = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    role: Role.meta({ description: 'Your role in the team.' }),
    memberCount: z.int().min(1),
    projectCount: z.int().min(0),
    createdAt: Timestamp,
    retentionDays: RetentionDays,
    legalHold: LegalHold,
  })
  .meta({ id: 'Team' });

export const UpdatedTeam = Team.extend({
  role: Role.nullable().meta({ description: 'Your role in the team; null for an instance administrator who is not a member (setting a legal hold).' }),
}).meta({ id: 'UpdatedTeam' });

export const TeamMember = z
  .strictObject({
    user: z.strictObject({ id: z.string(), email: z.string(), name: z.string().nullable() }),
    role: Role,
    joinedAt: Timestamp,
  })
  .meta({ id: 'TeamMember' });

export const TeamInvitation = z
  .strictObject({ id: z.string(), role: Role, email: z.string().nullable(), createdAt: Timestamp, expiresAt: Timestamp })
  .meta({ id: 'TeamInvitation', description: 'Never the token.' });
