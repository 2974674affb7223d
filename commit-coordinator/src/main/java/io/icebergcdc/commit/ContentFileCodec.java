package io.icebergcdc.commit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.ContentFileParser;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.PartitionSpec;

/**
 * Encodes Iceberg data and delete files as the JSON that Iceberg's REST catalog protocol defines
 * for content files. The encoding names its partition spec by id; decoding needs the table's specs.
 */
public final class ContentFileCodec {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private ContentFileCodec() {}

  public static String encode(ContentFile<?> file, Map<Integer, PartitionSpec> specs) {
    PartitionSpec spec = specs.get(file.specId());
    if (spec == null) {
      throw new IllegalArgumentException(
          "file " + file.location() + " has partition spec " + file.specId() + ", unknown here");
    }
    return ContentFileParser.toJson(file, spec);
  }

  /** Each of the files, encoded as {@link #encode} does. */
  public static List<String> encodeAll(
      Iterable<? extends ContentFile<?>> files, Map<Integer, PartitionSpec> specs) {
    List<String> encoded = new ArrayList<>();
    for (ContentFile<?> file : files) {
      encoded.add(encode(file, specs));
    }
    return encoded;
  }

  public static DataFile decodeDataFile(String json, Map<Integer, PartitionSpec> specs) {
    ContentFile<?> file = decode(json, specs);
    if (!(file instanceof DataFile)) {
      throw new IllegalArgumentException("not a data file: " + file.location());
    }
    return (DataFile) file;
  }

  public static DeleteFile decodeDeleteFile(String json, Map<Integer, PartitionSpec> specs) {
    ContentFile<?> file = decode(json, specs);
    if (!(file instanceof DeleteFile)) {
      throw new IllegalArgumentException("not a delete file: " + file.location());
    }
    return (DeleteFile) file;
  }

  private static ContentFile<?> decode(String json, Map<Integer, PartitionSpec> specs) {
    JsonNode node;
    try {
      node = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("a committed file's description is not JSON", e);
    }
    int specId = node.path("spec-id").asInt();
    PartitionSpec spec = specs.get(specId);
    if (spec == null) {
      throw new IllegalArgumentException(
          "a file to commit has partition spec " + specId + ", which the table does not have");
    }
    return ContentFileParser.fromJson(node, spec);
  }
}
