// Shared vocabulary of Interface B's catalog. The JSON itself is built by PostgreSQL
// (catalog-queries.ts); field order and presence follow the seed's tables.

export type ItemKind = 'software' | 'graphics' | 'video' | 'audio' | 'other';
export type License = 'regular' | 'extended';

/** ISO 8601 UTC to the second, as the seed writes them: 2026-11-22T10:00:00Z. */
export function isoSeconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Which optional media fields an item of each kind may carry (seed, Item table). */
export const mediaRules: Record<ItemKind, { previewImage: boolean; previewVideo: boolean; previewAudio: boolean }> = {
  software: { previewImage: true, previewVideo: false, previewAudio: false },
  graphics: { previewImage: true, previewVideo: false, previewAudio: false },
  other: { previewImage: true, previewVideo: false, previewAudio: false },
  video: { previewImage: true, previewVideo: true, previewAudio: false },
  audio: { previewImage: false, previewVideo: false, previewAudio: true },
};
