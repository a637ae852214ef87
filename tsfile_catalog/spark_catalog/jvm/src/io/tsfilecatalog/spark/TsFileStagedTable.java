package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;

/**
 * A table being created (or replaced) by {@code CREATE TABLE ... AS SELECT}, {@code
 * saveAsTable} or {@code writeTo(...).create()}: the query's rows are the table's first commit,
 * and the name is registered only once that commit is made ({@link #commitStagedChanges}).
 * The options of the write (such as {@code tagColumns} given to {@code saveAsTable}) are the
 * table's options too, so the delegate hears them at commit.
 */
class TsFileStagedTable implements StagedTable, SupportsWrite {
  private final ObjectNode request;
  private final StructType schema;
  private final JsonNode staged;
  private final Map<String, String> writeOptions = new HashMap<>();
  private boolean written;

  TsFileStagedTable(ObjectNode request, StructType schema, JsonNode staged) {
    this.request = request;
    this.schema = schema;
    this.staged = staged;
  }

  @Override
  public String name() {
    return request.path("namespace").toString() + "." + request.path("name").asText();
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Map<String, String> properties() {
    return Client.toMap(request.get("properties"));
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.TRUNCATE);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    written = true;
    writeOptions.putAll(info.options().asCaseSensitiveMap());
    TsFileWriteBuilder builder =
        new TsFileWriteBuilder(schema, Client.toMap(staged.get("write_options")), info, null);
    return staged.path("truncate").asBoolean() ? builder.truncate() : builder;
  }

  private ObjectNode outcome() {
    ObjectNode out = request.deepCopy();
    out.set("staged", staged);
    out.put("schema", schema.json());
    out.put("written", written);
    out.set("write_options", Client.map(writeOptions));
    return out;
  }

  @Override
  public void commitStagedChanges() {
    Client.call("commit_staged", outcome());
  }

  @Override
  public void abortStagedChanges() {
    Client.call("abort_staged", outcome());
  }
}
