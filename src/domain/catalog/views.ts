// Shared vocabulary of the seller API's catalog. Its values are built in catalog-queries.ts; field
// order and presence follow the seed's tables.

export type ItemKind = 'software' | 'graphics' | 'video' | 'audio' | 'other';
export type License = 'regular' | 'extended';

/** Which optional media fields an item of each kind may carry (seed, Item table). */
export const mediaRules: Record<ItemKind, { previewImage: boolean; previewVideo: boolean; previewAudio: boolean }> = {
  software: { previewImage: true, previewVideo: false, previewAudio: false },
  graphics: { previewImage: true, previewVideo: false, previewAudio: false },
  other: { previewImage: true, previewVideo: false, previewAudio: false },
  video: { previewImage: true, previewVideo: true, previewAudio: false },
  audio: { previewImage: false, previewVideo: false, previewAudio: true },
};
